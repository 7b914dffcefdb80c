import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { defaultConfig } from '../../src/config.js';
import { createGateway } from '../../src/create-gateway.js';

/** A gateway in front of a stand-in service. */
export interface StandIn {
  /** POSTs a query with a key, through `app.fetch`, and returns the parsed body. */
  gql(query: string, variables?: Record<string, unknown>): Promise<any>;
  close(): Promise<void>;
}

/**
 * Serves, for every request, a one-page success envelope whose `data` is `dataFor(url)` (one
 * credit per item), and a gateway in front of it, built by the composition root with the
 * defaults. For records the sandbox would never send.
 */
export async function startStandIn(dataFor: (url: URL) => unknown[]): Promise<StandIn> {
  const server = createServer((req, res) => {
    const url = new URL(req.url!, 'http://stand-in');
    const data = dataFor(url);
    res.setHeader('content-type', 'application/json');
    res.end(
      JSON.stringify({
        success: true,
        data,
        pagination: { hasMore: false, nextCursor: null },
        meta: { endpoint: url.pathname, creditsUsed: data.length, creditsRemaining: 100 },
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  // Budgets are not what these tests are about: room for any query they send.
  const gateway = await createGateway(
    { ...defaultConfig, creditBudgetDefault: 1_000_000, creditBudgetMax: 1_000_000 },
    {
      upstreamUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      processMetrics: false,
    },
  );
  return {
    async gql(query, variables = {}) {
      const response = await gateway.app.fetch('http://gateway/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'k' },
        body: JSON.stringify({ query, variables }),
      });
      return response.json();
    },
    async close() {
      await gateway.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
