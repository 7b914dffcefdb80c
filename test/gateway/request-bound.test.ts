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
