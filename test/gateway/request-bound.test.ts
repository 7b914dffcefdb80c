import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config.js';
import { encodeGlobalId } from '../../src/nodes/global-id.js';
import { NO_CACHE, spentOn, startStack, type Stack } from '../helpers/start-stack.js';

let stack: Stack;
beforeAll(async () => {
  // Counts upstream requests: every operation asks for fresh pages.
  stack = await startStack({ headers: NO_CACHE });
});
afterAll(() => stack?.close());
beforeEach(() => stack.sandbox.reset());

/** Ids of persons the service does not know: each lookup asks once and finds nothing (0 credits). */
const unknownPersons = (count: number) =>
  Array.from({ length: count }, () =>
    encodeGlobalId('Person', randomUUID(), defaultConfig.cursorSecret),
  );

const NODES = `query Many($ids: [ID!]!) { nodes(ids: $ids) { id } }`;

describe('MAX_UPSTREAM_REQUESTS and nodes(ids:)', () => {
  it('nodes(ids:) takes at most 100 ids: more is INVALID_INPUT naming ids, nothing sent', async () => {
    const response = await stack.gql(NODES, { ids: unknownPersons(101) });
    expect(response.errors?.[0]).toMatchObject({
      message: expect.stringContaining('at most 100 ids (got 101)'),
      extensions: { code: 'INVALID_INPUT', argument: 'ids' },
    });
    expect(spentOn(stack.sandbox).requests).toBe(0);
  });

  it('100 unknown ids: a request each, no credit, and the estimate counted them', async () => {
    const response = await stack.gql(NODES, { ids: unknownPersons(100) });
    expect(response.errors).toBeUndefined();
    expect(response.data.nodes).toEqual(Array.from({ length: 100 }, () => null));
    expect(spentOn(stack.sandbox)).toEqual({ requests: 100, credits: 0 });
    expect(response.extensions).toMatchObject({ upstreamRequests: 100, credits: { used: 0 } });
  });

  it('a flood of lookups that find nothing is refused before anything is sent, even with credits to spare', async () => {
    const aliases = Array.from({ length: 11 }, (_, i) => `a${i}: nodes(ids: $ids) { id }`);
    const response = await stack.gql(
      `query Flood($ids: [ID!]!) { ${aliases.join(' ')} }`,
      { ids: unknownPersons(100) },
      { headers: { 'x-credit-budget': '10000' } },
    );
    expect(response.errors).toEqual([
      expect.objectContaining({
        extensions: { code: 'UPSTREAM_REQUESTS_EXCEEDED', requests: 1_100, limit: 1_000 },
      }),
    ]);
    expect(spentOn(stack.sandbox).requests).toBe(0);
  });
});

describe('while running: the request bound, and empty pages', () => {
  it('unknown companies cost three lookups each: cut at MAX_UPSTREAM_REQUESTS, nothing cached', async () => {
    // A bound of 100, so that 40 lookups estimated at one request each pass the estimate (it
    // assumes the first list finds the company) and meet the bound while they run (3 each).
    const bounded = await startStack({ config: { maxUpstreamRequests: 100 } });
    try {
      const ids = Array.from({ length: 40 }, () =>
        encodeGlobalId('Company', randomUUID(), defaultConfig.cursorSecret),
      );
      const response = await bounded.gql(NODES, { ids });
      expect(response.extensions!.credits).toMatchObject({ used: 0 });
      const codes = new Set((response.errors ?? []).map((error) => error.extensions?.code));
      expect([...codes]).toEqual(['UPSTREAM_REQUESTS_EXCEEDED']);
      // At most the bound, and what the operation had in flight when it was reached.
      const sent = spentOn(bounded.sandbox).requests;
      expect(sent).toBeGreaterThanOrEqual(100);
      expect(sent).toBeLessThanOrEqual(100 + defaultConfig.upstreamConcurrency);
      // The empty pages were not kept: asked again, they are asked again.
      bounded.sandbox.reset();
      await bounded.gql(NODES, { ids: ids.slice(0, 5) });
      expect(spentOn(bounded.sandbox).requests).toBe(15);
    } finally {
      await bounded.close();
    }
  });

  it('an attempt that timed out may have been charged: reported, and counted against the budget', async () => {
    // 500 ms allowed, the service answers in 600: every attempt times out.
    const slow = await startStack({ config: { upstreamTimeoutMs: 500, breakerFailures: 100 } });
    slow.sandbox.setLatency({ fixedMs: 600 });
    try {
      const query = `{ fundingEvents(first: 3) { nodes { uuid } } }`;
      const retried = await slow.gql(query);
      expect(retried.errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
      expect(retried.extensions).toMatchObject({
        credits: { used: 0, uncertain: 9 },
        upstreamRequests: 3,
        upstreamRetries: 2,
      });
      // With a budget of 5, the first attempt's possible 3 leave no room for another.
      const bounded = await slow.gql(query, {}, { headers: { 'x-credit-budget': '5' } });
      expect(bounded.extensions).toMatchObject({
        credits: { used: 0, uncertain: 3 },
        upstreamRequests: 1,
      });
    } finally {
      slow.sandbox.setLatency({});
      await slow.close();
    }
  });
});
