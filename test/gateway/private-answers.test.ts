import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../helpers/start-stack.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack?.close());

const QUERY = '{ companies(first: 1) { nodes { name } } }';

/** The caching headers of a response, as a shared cache in front would read them. */
function caching(response: Response) {
  const vary = (response.headers.get('vary') ?? '').toLowerCase().split(/\s*,\s*/);
  return { cacheControl: response.headers.get('cache-control'), vary };
}

describe('every answer is private to its caller: no shared cache may keep it', () => {
  it("a GET of a persisted query with a key (Apollo's useGETForHashedQueries)", async () => {
    const sha256Hash = createHash('sha256').update(QUERY).digest('hex');
    const extensions = JSON.stringify({ persistedQuery: { version: 1, sha256Hash } });
    const register = await fetch(stack.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'demo-key' },
      body: JSON.stringify({ query: QUERY, extensions: JSON.parse(extensions) }),
    });
    expect(register.status).toBe(200);

    const response = await fetch(`${stack.url}?extensions=${encodeURIComponent(extensions)}`, {
      headers: { 'x-api-key': 'demo-key', accept: 'application/json' },
    });
    const body = (await response.json()) as { data?: unknown };
    expect(response.status).toBe(200);
    expect(body.data).toBeDefined();
    expect(response.headers.get('x-credits-remaining')).not.toBeNull();
    const { cacheControl, vary } = caching(response);
    expect(cacheControl).toBe('private, no-store');
    expect(vary).toEqual(expect.arrayContaining(['x-api-key', 'authorization', 'x-credit-budget']));
  });

  it.each([
    ['a POST with data', { 'x-api-key': 'demo-key' }],
    ['an error (no key)', {}],
  ])('%s', async (_what, headers: Record<string, string>) => {
    const response = await fetch(stack.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ query: QUERY }),
    });
    const { cacheControl, vary } = caching(response);
    expect(cacheControl).toBe('private, no-store');
    expect(vary).toContain('x-api-key');
  });

  it('the subgraph endpoint too', async () => {
    const response = await fetch(`${stack.origin}/subgraph`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'demo-key' },
      body: JSON.stringify({ query: QUERY }),
    });
    expect(caching(response).cacheControl).toBe('private, no-store');
  });
});
