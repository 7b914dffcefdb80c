import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { SMALL_SIZES, startGateway, type Gateway } from '../helpers/start-stack.js';

let sandbox: Sandbox;
let gateway: Gateway;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, quiet: true, sizes: SMALL_SIZES });
  gateway = await startGateway(sandbox, { config: { operationTimeoutMs: 500 } });
});
afterAll(async () => {
  await gateway?.close();
  await sandbox?.close();
});
beforeEach(() => sandbox.reset());

describe('the operation deadline', () => {
  it('fails the fields still open with OPERATION_TIMEOUT and sends nothing more', async () => {
    // 500 records are five pages one after the other, 300 ms each: the deadline (500 ms) passes
    // during the second.
    sandbox.setLatency({ fixedMs: 300 });
    const response = await gateway.gql(`{ fundingEvents(first: 500) { nodes { uuid } } }`);
    expect(response.errors?.[0]).toMatchObject({
      path: ['fundingEvents'],
      extensions: { code: 'OPERATION_TIMEOUT' },
    });
    expect(response.errors?.[0]?.message).toMatch(
      /longer than its 500 ms \(OPERATION_TIMEOUT_MS\)/,
    );
    // The page paid for before the deadline is kept.
    expect(response.data.fundingEvents.nodes).toHaveLength(100);
    await sleep(1_000);
    expect(sandbox.requestLog()).toHaveLength(2);
  });
});

describe('a client that goes away mid-walk', () => {
  it('gets no further upstream request sent for it', async () => {
    // Slow enough that the abort lands while the second level is in flight, even on a busy machine.
    sandbox.setLatency({ fixedMs: 1_500 });
    // Three levels: the rounds, then each company's moves, then each person's moves.
    const query = `{ fundingEvents(first: 3) { nodes { company { execMoves(first: 2) { nodes {
      person { execMoves(first: 2) { nodes { uuid } } } } } } } } }`;
    const walker = await startGateway(sandbox); // the default deadline: 30 s
    const controller = new AbortController();
    const request = fetch(walker.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': sandbox.keys.demo },
      body: JSON.stringify({ query }),
      signal: controller.signal,
    }).catch((error: Error) => error);
    // Abort while the second level is in flight.
    for (let waited = 0; sandbox.requestLog().length < 2; waited += 5) {
      if (waited > 10_000) throw new Error('the second level never started');
      await sleep(5);
    }
    controller.abort();
    expect(await request).toBeInstanceOf(Error);
    // Requests sent just before the abort may reach the sandbox just after it.
    await sleep(300);
    const atAbort = sandbox.requestLog().length;
    await sleep(2_000);
    expect(sandbox.requestLog().length).toBe(atAbort);
    expect(atAbort).toBeLessThanOrEqual(4); // the rounds and the companies' moves, no person's
    await walker.close();
  });
});
