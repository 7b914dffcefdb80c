import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { NO_CACHE, startStack, type Stack } from '../helpers/start-stack.js';

let stack: Stack;
beforeAll(async () => {
  // Counts upstream requests: every operation asks for fresh pages.
  stack = await startStack({ headers: NO_CACHE });
});
afterAll(() => stack?.close());
beforeEach(() => stack.sandbox.reset());

/** POSTs `query` naming `operationName`, with the demo key or none. */
async function run(query: string, operationName: string, key: string | null) {
  const response = await fetch(stack.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...NO_CACHE,
      ...(key ? { 'x-api-key': key } : {}),
    },
    body: JSON.stringify({ query, operationName }),
  });
  return (await response.json()) as any;
}

describe('a document of several operations, shared by callers', () => {
  it('runs and estimates the operation each caller names, whoever came first', async () => {
    const first = 'query A { __typename } query B { companies(first: 1) { nodes { name } } }';
    const [company] = (await stack.rest('companies?limit=1')).data;
    stack.sandbox.reset();

    // A caller without a key compiles A first; B's caller gets B, at B's estimate.
    expect((await run(first, 'A', null)).data).toEqual({ __typename: 'Query' });
    const b = await run(first, 'B', stack.sandbox.keys.demo);
    expect(b.data).toEqual({ companies: { nodes: [{ name: company.name }] } });
    expect(b.extensions.credits).toMatchObject({ used: 1, estimate: 1 });

    // Reversed: B compiled first, A's caller runs A, which costs and sends nothing.
    const second = 'query B { companies(first: 1) { nodes { name } } } query A { __typename }';
    await run(second, 'B', stack.sandbox.keys.demo);
    stack.sandbox.reset();
    const a = await run(second, 'A', stack.sandbox.keys.demo);
    expect(a.data).toEqual({ __typename: 'Query' });
    expect(a.extensions).toMatchObject({ credits: { used: 0, estimate: 0 }, upstreamRequests: 0 });
    expect(stack.sandbox.requestLog()).toHaveLength(0);
  });
});
