import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultConfig, type Config } from '../../src/config.js';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/index.js';
import { serveGateway } from '../../src/serve-gateway.js';
import type { UpstreamOptions } from '../../src/upstream/create-upstream.js';
import type { Logger } from '../../src/logging/create-logger.js';

/** Small data, so that a suite starts in well under a second. */
export const SMALL_SIZES = {
  companies: 600,
  investors: 200,
  persons: 700,
  fundingEvents: 1500,
  acquisitions: 400,
  execMoves: 1200,
};

/** Upstream requests and credits `sandbox` saw since its last reset, from its request log. */
export function spentOn(sandbox: Sandbox): { requests: number; credits: number } {
  const log = sandbox.requestLog();
  return { requests: log.length, credits: log.reduce((sum, entry) => sum + entry.records, 0) };
}

/**
 * Request headers that make an operation fetch every page from the service (and pay for it),
 * whatever the page cache holds: for tests that count upstream requests and credits.
 */
export const NO_CACHE = { 'cache-control': 'no-cache' } as const;

/** A GraphQL response as the client sees it, with the HTTP status. */
export interface GraphQLResponse<D = any> {
  status: number;
  data?: D;
  errors?: { message: string; path?: (string | number)[]; extensions?: Record<string, any> }[];
  extensions?: {
    credits: { used: number; saved: number; remaining: number | null };
    upstreamRequests: number;
    upstreamRetries: number;
    [key: string]: unknown;
  };
}

/** A gateway listening on loopback, as a client sees it. */
export interface Gateway {
  /** The gateway's /graphql URL. */
  url: string;
  /** Its origin, e.g. `http://127.0.0.1:41234` (for `/metrics`, `/healthz`). */
  origin: string;
  /** POSTs a query with `key` (default the demo key; null sends none). */
  gql<D = any>(
    query: string,
    variables?: Record<string, unknown>,
    options?: { key?: string | null; headers?: Record<string, string> },
  ): Promise<GraphQLResponse<D>>;
  close(): Promise<void>;
  /** Shuts down as SIGTERM does: subscriptions complete, operations in flight finish. */
  shutdown(): Promise<void>;
}

export interface Stack extends Gateway {
  sandbox: Sandbox;
  /** GETs `/v1/<path>` on the sandbox directly, with the demo key. */
  rest(path: string, key?: string): Promise<any>;
}

/** Options of {@link startGateway} and {@link startStack}. */
export interface GatewayOptions {
  /** Settings over the defaults (say why in the suite). */
  config?: Partial<Config>;
  /** The upstream pipeline's options over those the config gives, e.g. a tiny cache bound. */
  upstream?: Partial<UpstreamOptions>;
  /** Where the gateway logs (a test captures it); absent, nowhere. */
  logger?: Logger;
  /**
   * Headers `gql` sends with every request (under its own): {@link NO_CACHE} for a suite
   * that counts upstream requests and credits (a client asking for fresh data, the config as
   * shipped).
   */
  headers?: Record<string, string>;
}

/**
 * Starts a gateway in front of `sandbox` on loopback port 0, built by the same composition root
 * and with the same defaults as `npm start` (page cache on, in memory; the default budget;
 * metrics at `/metrics`), with `options.config` over them. Logs go to `options.logger`, else
 * nowhere. A suite that counts upstream requests sends {@link NO_CACHE} or a key of its own.
 */
export async function startGateway(
  sandbox: Sandbox,
  options: GatewayOptions = {},
): Promise<Gateway> {
  const config: Config = {
    ...defaultConfig,
    port: 0,
    host: '127.0.0.1',
    // Each gateway its own alerts file (the default `data/` would be every test's at once).
    alertsDataDir: mkdtempSync(join(tmpdir(), 'gateway-alerts-')),
    ...options.config,
  };
  const serving = await serveGateway(config, {
    upstreamUrl: sandbox.url,
    graphiqlApiKey: sandbox.keys.demo,
    logger: options.logger,
    // Node's process metrics are the process's, not this gateway's: several run in one test.
    processMetrics: false,
    upstream: options.upstream,
  });
  const origin = `http://127.0.0.1:${serving.port}`;
  const url = `${origin}/graphql`;
  return {
    url,
    origin,
    async gql(query, variables, { key = sandbox.keys.demo, headers = {} } = {}) {
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/graphql-response+json, application/json',
          ...(key ? { 'x-api-key': key } : {}),
          ...options.headers,
          ...headers,
        },
        body: JSON.stringify({ query, variables }),
      });
      return { status: response.status, ...((await response.json()) as object) };
    },
    async close() {
      serving.server.closeAllConnections();
      await serving.shutdown();
    },
    shutdown: () => serving.shutdown(),
  };
}

/**
 * Starts the sandbox and a gateway in front of it, both listening on loopback port 0, the way
 * `npm start` wires them. Register `close` in `afterAll`.
 */
export async function startStack(
  options: GatewayOptions & { sandbox?: SandboxOptions } = {},
): Promise<Stack> {
  const sandbox = await startSandbox({
    port: 0,
    quiet: true,
    sizes: SMALL_SIZES,
    ...options.sandbox,
  });
  const gateway = await startGateway(sandbox, options);
  return {
    ...gateway,
    sandbox,
    async rest(path, key = sandbox.keys.demo) {
      const response = await fetch(`${sandbox.url}/v1/${path}`, { headers: { 'x-api-key': key } });
      return response.json();
    },
    async close() {
      await gateway.close();
      await sandbox.close();
    },
  };
}
