import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from '../../src/app.js';
import { defaultConfig, type Config } from '../../src/config.js';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/index.js';
import { createUpstream, type UpstreamOptions } from '../../src/upstream/create-upstream.js';
import { observeAll } from '../../src/upstream/upstream-observer.js';
import { silentLogger, type Logger } from '../../src/logging/create-logger.js';
import { upstreamLog } from '../../src/logging/upstream-log.js';
import { GatewayMetrics } from '../../src/metrics/gateway-metrics.js';
import { upstreamOptions } from '../../src/serve-gateway.js';

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
}

export interface Stack extends Gateway {
  sandbox: Sandbox;
  /** GETs `/v1/<path>` on the sandbox directly, with the demo key. */
  rest(path: string, key?: string): Promise<any>;
}

/** Options of {@link startGateway} and {@link startStack}. */
export interface GatewayOptions {
  /** Settings over the defaults. The page cache is off unless `cacheTtlSeconds` is set. */
  config?: Partial<Config>;
  /** The upstream pipeline's options over those the config gives, e.g. a tiny cache bound. */
  upstream?: Partial<UpstreamOptions>;
  /** Where the gateway logs (a test captures it); absent, nowhere. */
  logger?: Logger;
}

/**
 * Starts a gateway in front of `sandbox` on loopback port 0, wired as `npm start` wires it (with
 * metrics at `/metrics`, without process metrics; logs to `options.logger`, else nowhere). The
 * suites count each operation's upstream requests, so the page cache is off by default (its own
 * suite turns it on), and the breaker opens only after 10,000 failures (its suite sets fewer).
 */
export async function startGateway(
  sandbox: Sandbox,
  options: GatewayOptions = {},
): Promise<Gateway> {
  const config: Config = {
    ...defaultConfig,
    upstreamTimeoutMs: 5_000,
    cacheTtlSeconds: 0,
    // Fault tests would open the breaker for the tests after them: its own suite sets it.
    breakerFailures: 10_000,
    ...options.config,
  };
  const logger = options.logger ?? silentLogger();
  const log = upstreamLog(logger);
  const metrics = new GatewayMetrics({ cacheBytes: () => upstream.cacheBytes() });
  const upstream = createUpstream({
    ...upstreamOptions(config, sandbox.url),
    observer: observeAll(metrics.upstream, log.observer),
    ...options.upstream,
  });
  await upstream.ready(2_000);
  const server: Server = createServer(
    createApp(config, {
      upstream,
      graphiqlApiKey: sandbox.keys.demo,
      logger,
      metrics,
      scrapeMetrics: () => metrics.scrape(),
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
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
          ...headers,
        },
        body: JSON.stringify({ query, variables }),
      });
      return { status: response.status, ...((await response.json()) as object) };
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      log.close();
      await upstream.close();
    },
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
