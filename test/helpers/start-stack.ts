import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from '../../src/app.js';
import { defaultConfig, type Config } from '../../src/config.js';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/index.js';
import { createUpstream } from '../../src/upstream/create-upstream.js';

/** Small data, so that a suite starts in well under a second. */
export const SMALL_SIZES = {
  companies: 600,
  investors: 200,
  persons: 700,
  fundingEvents: 1500,
  acquisitions: 400,
  execMoves: 1200,
};

/** A GraphQL response as the client sees it, with the HTTP status. */
export interface GraphQLResponse<D = any> {
  status: number;
  data?: D;
  errors?: { message: string; path?: (string | number)[]; extensions?: Record<string, any> }[];
  extensions?: {
    credits: { used: number; remaining: number | null };
    upstreamRequests: number;
    [key: string]: unknown;
  };
}

export interface Stack {
  sandbox: Sandbox;
  /** The gateway's /graphql URL. */
  url: string;
  /** POSTs a query with `key` (default the demo key; null sends none). */
  gql<D = any>(
    query: string,
    variables?: Record<string, unknown>,
    options?: { key?: string | null; headers?: Record<string, string> },
  ): Promise<GraphQLResponse<D>>;
  /** GETs `/v1/<path>` on the sandbox directly, with the demo key. */
  rest(path: string, key?: string): Promise<any>;
  close(): Promise<void>;
}

/**
 * Starts the sandbox and the gateway in front of it, both listening on loopback port 0, the way
 * `npm start` wires them. Register `close` in `afterAll`.
 */
export async function startStack(
  options: { sandbox?: SandboxOptions; config?: Partial<Config> } = {},
): Promise<Stack> {
  const sandbox = await startSandbox({
    port: 0,
    quiet: true,
    sizes: SMALL_SIZES,
    ...options.sandbox,
  });
  const config: Config = { ...defaultConfig, upstreamTimeoutMs: 5_000, ...options.config };
  const upstream = createUpstream({
    baseUrl: sandbox.url,
    timeoutMs: config.upstreamTimeoutMs,
  });
  const server: Server = createServer(
    createApp(config, { upstream, graphiqlApiKey: sandbox.keys.demo }),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;

  return {
    sandbox,
    url,
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
    async rest(path, key = sandbox.keys.demo) {
      const response = await fetch(`${sandbox.url}/v1/${path}`, { headers: { 'x-api-key': key } });
      return response.json();
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await upstream.close();
      await sandbox.close();
    },
  };
}
