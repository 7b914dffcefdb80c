import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { SMALL_SIZES, startGateway, type Gateway, NO_CACHE } from '../helpers/start-stack.js';

const LIST = `{ fundingEvents(first: 3) { nodes { uuid } } }`;

let sandbox: Sandbox;
let gateway: Gateway;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, quiet: true, sizes: SMALL_SIZES });
  // Counts upstream requests and credits: every operation asks for fresh pages.
  gateway = await startGateway(sandbox, { config: { upstreamTimeoutMs: 300 }, headers: NO_CACHE });
});
afterAll(async () => {
  await gateway?.close();
  await sandbox?.close();
});
beforeEach(() => sandbox.reset());

/** The /v1 requests the sandbox saw since the last reset: status and receive time. */
function calls() {
  return sandbox.requestLog().map((entry) => ({ status: entry.status, at: entry.at }));
}

describe('retries of transient faults', () => {
  it('503, 503, 200: success after 3 calls, 2 of them retries', async () => {
    sandbox.scriptFaults([
      { kind: 'serverError', status: 503 },
      { kind: 'serverError', status: 503 },
    ]);
    const response = await gateway.gql(LIST);
    expect(response.errors).toBeUndefined();
    expect(response.data.fundingEvents.nodes).toHaveLength(3);
    expect(calls().map((call) => call.status)).toEqual([503, 503, 200]);
    expect(response.extensions).toMatchObject({ upstreamRequests: 3, upstreamRetries: 2 });
    expect(response.extensions!.credits.used).toBe(3);
  });

  it('500, 502, 504 and a dropped connection are retried too', async () => {
    sandbox.scriptFaults([{ kind: 'serverError', status: 502 }, { kind: 'drop' }]);
    const response = await gateway.gql(LIST);
    expect(response.errors).toBeUndefined();
    expect(calls().map((call) => call.status)).toEqual([502, 0, 200]);
  });

  it('gives up after UPSTREAM_RETRIES retries: 3 calls, then UPSTREAM_UNAVAILABLE', async () => {
    sandbox.scriptFaults([
      { kind: 'serverError', status: 500 },
      { kind: 'serverError', status: 504 },
      { kind: 'serverError', status: 503 },
    ]);
    const response = await gateway.gql(LIST);
    expect(response.errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
    expect(calls()).toHaveLength(3);
    expect(response.extensions).toMatchObject({ upstreamRequests: 3, upstreamRetries: 2 });
  });

  it('a hang past the timeout, then 200: success after 2 calls', async () => {
    sandbox.scriptFaults([{ kind: 'hang', ms: 2_000 }]);
    const response = await gateway.gql(LIST);
    expect(response.errors).toBeUndefined();
    expect(calls().map((call) => call.status)).toEqual([0, 200]);
    expect(response.extensions).toMatchObject({ upstreamRequests: 2, upstreamRetries: 1 });
  });

  it('402 and 403 are answered at once: 1 call each', async () => {
    const broke = await gateway.gql(LIST, {}, { key: sandbox.keys.noCredit });
    expect(broke.errors?.[0]?.extensions?.code).toBe('PAYMENT_REQUIRED');
    const blocked = await gateway.gql(LIST, {}, { key: sandbox.keys.blocked });
    expect(blocked.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(calls().map((call) => call.status)).toEqual([402, 403]);
  });
});

describe('429', () => {
  it('Retry-After: 1 is waited out once, then the call succeeds', async () => {
    sandbox.scriptFaults([{ kind: 'tooManyRequests', retryAfter: 1 }]);
    const response = await gateway.gql(LIST);
    expect(response.errors).toBeUndefined();
    const [limited, served] = calls();
    expect([limited?.status, served?.status]).toEqual([429, 200]);
    // The second call waited for the second the service asked for (the log's clock is ms).
    expect(served!.at - limited!.at).toBeGreaterThanOrEqual(990);
    expect(response.extensions).toMatchObject({ upstreamRequests: 2, upstreamRetries: 1 });
  });

  it('Retry-After: 60 is answered at once: TOO_MANY_REQUESTS with retryAfter 60, 1 call', async () => {
    sandbox.scriptFaults([{ kind: 'tooManyRequests', retryAfter: 60 }]);
    const response = await gateway.gql(LIST);
    expect(response.errors?.[0]?.extensions).toMatchObject({
      code: 'TOO_MANY_REQUESTS',
      retryAfter: 60,
    });
    expect(calls()).toHaveLength(1);
  });

  it('a wait that would outlast the operation deadline is not started', async () => {
    const hurried = await startGateway(sandbox, {
      config: { operationTimeoutMs: 800 },
      headers: NO_CACHE,
    });
    try {
      sandbox.scriptFaults([{ kind: 'tooManyRequests', retryAfter: 1 }]);
      const response = await hurried.gql(LIST);
      expect(response.errors?.[0]?.extensions).toMatchObject({
        code: 'TOO_MANY_REQUESTS',
        retryAfter: 1,
      });
      expect(calls()).toHaveLength(1);
    } finally {
      await hurried.close();
    }
  });

  it('a second 429 in a row is answered: a 429 is waited out once per call', async () => {
    sandbox.scriptFaults([
      { kind: 'tooManyRequests', retryAfter: 1 },
      { kind: 'tooManyRequests', retryAfter: 1 },
    ]);
    const response = await gateway.gql(LIST);
    expect(response.errors?.[0]?.extensions?.code).toBe('TOO_MANY_REQUESTS');
    expect(calls().map((call) => call.status)).toEqual([429, 429]);
  });

  it("one key's wait never delays another key", async () => {
    sandbox.addKey('patient-key');
    sandbox.addKey('other-key');
    sandbox.scriptFaults([{ kind: 'tooManyRequests', retryAfter: 1 }]);
    const order: string[] = [];
    const waiting = gateway.gql(LIST, {}, { key: 'patient-key' }).then((response) => {
      order.push('patient');
      return response;
    });
    // Once the first key's call got its 429, the other key asks.
    while (calls().length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const other = await gateway.gql(LIST, {}, { key: 'other-key' });
    order.push('other');
    expect(other.errors).toBeUndefined();
    expect((await waiting).errors).toBeUndefined();
    expect(order).toEqual(['other', 'patient']);
  });
});

describe('the retry budget', () => {
  it('with every call failing, at most 1.2 upstream calls per operation', async () => {
    // Every call fails: the breaker (its own suite) would stop the calls this counts.
    const fresh = await startGateway(sandbox, {
      config: { breakerFailures: 10_000 },
      headers: NO_CACHE,
    });
    try {
      sandbox.setFaults({ serverError: 1 });
      const operations = 200;
      for (let sent = 0; sent < operations; sent += 20) {
        // Distinct operations: concurrent equal pages would be joined into one request.
        const batch = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            fresh.gql(`{ fundingEvents(first: ${i + 1}) { nodes { uuid } } }`),
          ),
        );
        for (const response of batch) {
          expect(response.errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
        }
      }
      const upstreamCalls = calls().length;
      expect(upstreamCalls).toBeGreaterThan(operations); // some were retried
      expect(upstreamCalls).toBeLessThanOrEqual(1.2 * operations);
    } finally {
      await fresh.close();
    }
  });
});
