import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { parseMetrics, valueOf } from '../helpers/prometheus.js';
import { NO_CACHE, SMALL_SIZES, startGateway, type Gateway } from '../helpers/start-stack.js';

const LIST = `{ fundingEvents(first: 3) { nodes { uuid } } }`;

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, quiet: true, sizes: SMALL_SIZES });
});
afterAll(() => sandbox?.close());
beforeEach(() => sandbox.reset());

/** GETs a health endpoint of the gateway at `url` (its /graphql URL). */
async function health(url: string, path: '/healthz' | '/readyz') {
  const response = await fetch(new URL(path, url));
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('the circuit breaker', () => {
  let gateway: Gateway;
  beforeEach(async () => {
    // Opens after 3 failures in a row, for 600 ms; no retries, so that each operation is one call.
    gateway = await startGateway(sandbox, {
      config: { breakerFailures: 3, breakerOpenMs: 600, upstreamRetries: 0 },
      // Each operation must reach the service.
      headers: NO_CACHE,
    });
  });
  afterEach(() => gateway.close());

  it('opens after a run of failures, fails fast, half-opens to probe, and closes', async () => {
    sandbox.setFaults({ serverError: 1 });
    for (let i = 0; i < 3; i++) await gateway.gql(LIST);
    expect(sandbox.requestLog()).toHaveLength(3);
    // The service is down, not this instance: it stays ready, and says the breaker is open.
    expect(await health(gateway.url, '/readyz')).toEqual({
      status: 200,
      body: { status: 'ready', breaker: 'open' },
    });
    expect((await health(gateway.url, '/healthz')).body).toEqual({ status: 'ok', breaker: 'open' });

    // Open: refused at once, nothing sent, with when to come back.
    const refused = await gateway.gql(LIST);
    expect(refused.errors?.[0]?.extensions).toMatchObject({
      code: 'UPSTREAM_UNAVAILABLE',
      retryAfter: 1,
    });
    expect(refused.errors?.[0]?.message).toMatch(/circuit open/);
    expect(refused.extensions!.upstreamRequests).toBe(0);
    expect(sandbox.requestLog()).toHaveLength(3);

    // After the open period one probe goes; it fails, and the circuit opens again.
    await sleep(650);
    await gateway.gql(LIST);
    expect(sandbox.requestLog()).toHaveLength(4);
    await gateway.gql(LIST);
    expect(sandbox.requestLog()).toHaveLength(4);

    // The service recovers: the next probe succeeds and closes the circuit.
    sandbox.setFaults({});
    await sleep(650);
    const probe = await gateway.gql(LIST);
    expect(probe.errors).toBeUndefined();
    const after = await gateway.gql(LIST);
    expect(after.errors).toBeUndefined();
    expect(sandbox.requestLog()).toHaveLength(6);
    expect(await health(gateway.url, '/readyz')).toEqual({
      status: 200,
      body: { status: 'ready', breaker: 'closed' },
    });
  });

  it('does not count what is the caller’s: 402, 403 and 429 keep it closed', async () => {
    for (let i = 0; i < 4; i++) {
      await gateway.gql(LIST, {}, { key: sandbox.keys.noCredit });
      await gateway.gql(LIST, {}, { key: sandbox.keys.blocked });
    }
    sandbox.scriptFaults(
      Array.from({ length: 4 }, () => ({ kind: 'tooManyRequests' as const, retryAfter: 30 })),
    );
    for (let i = 0; i < 4; i++) await gateway.gql(LIST);
    const served = await gateway.gql(LIST);
    expect(served.errors).toBeUndefined();
    expect(sandbox.requestLog()).toHaveLength(13);
  });

  it('clients that go away are not failures of the service', async () => {
    sandbox.setLatency({ fixedMs: 300 });
    // Five distinct operations: concurrent equal pages would be joined into one request.
    const aborted = Array.from({ length: 5 }, async (_, i) => {
      const controller = new AbortController();
      const request = fetch(gateway.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-api-key': sandbox.keys.demo,
          ...NO_CACHE,
        },
        body: JSON.stringify({ query: `{ fundingEvents(first: ${i + 1}) { nodes { uuid } } }` }),
        signal: controller.signal,
      }).catch(() => null);
      await sleep(100);
      controller.abort();
      return request;
    });
    await Promise.all(aborted);
    await sleep(400); // the upstream requests in flight have been cut
    expect(sandbox.requestLog()).toHaveLength(5);
    expect((await health(gateway.url, '/readyz')).status).toBe(200);
    sandbox.setLatency({});
    expect((await gateway.gql(LIST)).errors).toBeUndefined();
  });

  it('a success resets the run of failures', async () => {
    // Two failures and a success, twice: never three failures in a row.
    for (let round = 0; round < 2; round++) {
      sandbox.scriptFaults([
        { kind: 'serverError', status: 503 },
        { kind: 'serverError', status: 503 },
      ]);
      await gateway.gql(LIST);
      await gateway.gql(LIST);
      expect((await gateway.gql(LIST)).errors).toBeUndefined();
    }
    expect(sandbox.requestLog()).toHaveLength(6);
  });
});

describe('health endpoints', () => {
  it('/healthz and /readyz answer small JSON bodies', async () => {
    const gateway = await startGateway(sandbox);
    try {
      expect(await health(gateway.url, '/healthz')).toEqual({
        status: 200,
        body: { status: 'ok', breaker: 'closed' },
      });
      expect(await health(gateway.url, '/readyz')).toEqual({
        status: 200,
        body: { status: 'ready', breaker: 'closed' },
      });
    } finally {
      await gateway.close();
    }
  });
});

describe('overload inside the gateway is not an outage of the service', () => {
  it('2 connections and 20 slow operations: every one answered, no breaker opening, ready', async () => {
    // A pool of 2 and a 500 ms timeout; each upstream request takes 300 ms, so most wait for a
    // connection far longer than the timeout before they are sent.
    const gateway = await startGateway(sandbox, {
      config: { upstreamConnections: 2, upstreamTimeoutMs: 500, breakerFailures: 3 },
      headers: NO_CACHE,
    });
    sandbox.setLatency({ fixedMs: 300 });
    try {
      const pending = Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          gateway.gql(`{ fundingEvents(first: ${i + 1}) { nodes { uuid } } }`),
        ),
      );
      // Meanwhile the metrics show the gateway's own queue.
      await sleep(150);
      const samples = parseMetrics(await (await fetch(`${gateway.origin}/metrics`)).text());
      expect(valueOf(samples, 'gateway_upstream_queued_requests')).toBeGreaterThan(10);
      const answers = await pending;
      for (const answer of answers) expect(answer.errors).toBeUndefined();
      expect(sandbox.requestLog()).toHaveLength(20);
      expect(await health(gateway.url, '/readyz')).toEqual({
        status: 200,
        body: { status: 'ready', breaker: 'closed' },
      });
    } finally {
      sandbox.setLatency({});
      await gateway.close();
    }
  });
});
