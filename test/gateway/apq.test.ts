import { createHash } from 'node:crypto';
import { parse, print, type GraphQLError } from 'graphql';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Documents } from '../../src/admission/documents.js';
import { spentOn, startStack, type Stack, NO_CACHE } from '../helpers/start-stack.js';

let stack: Stack;
beforeAll(async () => {
  // Counts upstream requests and credits: every operation asks for fresh pages.
  stack = await startStack({ headers: NO_CACHE });
});
afterAll(() => stack?.close());
beforeEach(() => stack.sandbox.reset());

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** A query as Apollo Client sends it: `print`ed, and hashed as printed. */
function apolloQuery(source: string) {
  const query = print(parse(source));
  return { query, sha256Hash: sha256(query) };
}

/** Apollo Client's HttpLink headers, with the caller's key. */
function headers(key: string | null = 'demo-key'): Record<string, string> {
  return {
    'content-type': 'application/json',
    accept: 'application/graphql-response+json,application/json;q=0.9',
    ...(key ? { 'x-api-key': key } : {}),
    // Compares upstream requests and credits: every operation asks for fresh pages.
    ...NO_CACHE,
  };
}

async function post(body: unknown, key?: string | null, extra: Record<string, string> = {}) {
  const response = await fetch(stack.url, {
    method: 'POST',
    headers: { ...headers(key), ...extra },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

/** A GET as Apollo Client sends a hashed query with `useGETForHashedQueries`. */
async function get(params: Record<string, unknown>, key?: string | null) {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    search.set(name, typeof value === 'string' ? value : JSON.stringify(value));
  }
  const response = await fetch(`${stack.url}?${search}`, { headers: headers(key) });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

const COMPANIES = apolloQuery(
  `query Companies($n: Int) { companies(first: $n) { nodes { uuid name domain } } }`,
);

describe('automatic persisted queries, as Apollo Client sends them', () => {
  it('hash alone: PersistedQueryNotFound; the retry with the query registers it; then the hash alone runs, by POST and by GET', async () => {
    const { query, sha256Hash } = COMPANIES;
    const extensions = { persistedQuery: { version: 1, sha256Hash } };
    const variables = { n: 3 };

    const first = await post({ operationName: 'Companies', variables, extensions });
    expect(first.status).toBe(404);
    expect(first.headers.get('cache-control')).toBe('private, no-store');
    expect(first.body.errors).toEqual([
      { message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } },
    ]);
    expect(first.body.data).toBeUndefined();
    expect(first.body.extensions.credits.used).toBe(0);
    expect(stack.sandbox.requestLog()).toHaveLength(0);

    const retry = await post({ operationName: 'Companies', variables, extensions, query });
    expect(retry.status).toBe(200);
    expect(retry.body.errors).toBeUndefined();
    expect(retry.body.data.companies.nodes).toHaveLength(3);

    const hashOnly = await post({ operationName: 'Companies', variables, extensions });
    expect(hashOnly.status).toBe(200);
    expect(hashOnly.body.data).toEqual(retry.body.data);

    const viaGet = await get({ operationName: 'Companies', variables, extensions });
    expect(viaGet.status).toBe(200);
    expect(viaGet.body.data).toEqual(retry.body.data);
    expect(stack.sandbox.requestLog()).toHaveLength(3);
  });

  it('a GET of an unknown hash is PersistedQueryNotFound too, and nothing is sent upstream', async () => {
    const { sha256Hash } = apolloQuery(`{ investors(first: 1) { nodes { uuid } } }`);
    const response = await get({ extensions: { persistedQuery: { version: 1, sha256Hash } } });
    expect(response.status).toBe(404);
    expect(response.body.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    expect(stack.sandbox.requestLog()).toHaveLength(0);
  });

  it('a persisted query returns the data and costs the credits and requests of the same query sent in full', async () => {
    const { query, sha256Hash } = apolloQuery(
      `{ fundingEvents(first: 4) { nodes { uuid round company { name execMoves(first: 2) { nodes { role } } } } } }`,
    );
    const plain = await post({ query });
    const plainSpent = spentOn(stack.sandbox);
    expect(plain.body.errors).toBeUndefined();
    expect(plainSpent.requests).toBeGreaterThan(1);

    const extensions = { persistedQuery: { version: 1, sha256Hash } };
    stack.sandbox.reset();
    const registered = await post({ query, extensions });
    expect(spentOn(stack.sandbox)).toEqual(plainSpent);
    stack.sandbox.reset();
    const persisted = await post({ extensions });
    expect(spentOn(stack.sandbox)).toEqual(plainSpent);

    for (const response of [registered, persisted]) {
      expect(response.body.data).toEqual(plain.body.data);
      expect(response.body.extensions.credits.used).toBe(plain.body.extensions.credits.used);
      expect(response.body.extensions.credits.estimate).toBe(
        plain.body.extensions.credits.estimate,
      );
      expect(response.body.extensions.upstreamRequests).toBe(
        plain.body.extensions.upstreamRequests,
      );
    }
    expect(persisted.body.extensions.credits.used).toBe(plainSpent.credits);
  });

  it('a hash that is not the SHA-256 of the query is refused, and registers nothing', async () => {
    const victim = apolloQuery(`{ companies(first: 1) { nodes { uuid } } }`);
    const other = `{ investors(first: 2) { nodes { uuid name } } }`;
    const refused = await post({
      query: other,
      extensions: { persistedQuery: { version: 1, sha256Hash: victim.sha256Hash } },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.errors).toEqual([
      {
        message: expect.stringContaining('is not the SHA-256 of the query sent with it'),
        extensions: { code: 'PERSISTED_QUERY_MISMATCH' },
      },
    ]);
    expect(refused.body.data).toBeUndefined();
    expect(stack.sandbox.requestLog()).toHaveLength(0);

    // Whoever sends the victim's hash next does not get the other document run in its place.
    const next = await post({
      extensions: { persistedQuery: { version: 1, sha256Hash: victim.sha256Hash } },
    });
    expect(next.body.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    expect(stack.sandbox.requestLog()).toHaveLength(0);
  });

  it("a query registered by one caller runs under another caller's own key, budget and limits", async () => {
    const { query, sha256Hash } = apolloQuery(`{ investors(first: 5) { nodes { uuid } } }`);
    const extensions = { persistedQuery: { version: 1, sha256Hash } };
    expect((await post({ query, extensions })).body.errors).toBeUndefined();

    const workspace = stack.sandbox.addKey('apq-other-key', { credits: 100 });
    const other = await post({ extensions }, 'apq-other-key');
    expect(other.body.data.investors.nodes).toHaveLength(5);
    expect(other.body.extensions.credits.remaining).toBe(95);
    expect(stack.sandbox.requestLog().at(-1)?.workspace).toBe(workspace);

    const keyless = await post({ extensions }, null);
    expect(keyless.body.errors[0].extensions.code).toBe('UNAUTHORIZED');

    const overBudget = await post({ extensions }, 'apq-other-key', { 'x-credit-budget': '4' });
    expect(overBudget.body.errors[0].extensions).toMatchObject({
      code: 'CREDIT_BUDGET_EXCEEDED',
      estimate: 5,
      budget: 4,
    });
    expect(stack.sandbox.credits('apq-other-key')).toBe(95);
  });
});

describe('the APQ store', () => {
  it('is an LRU: past its bound the least recently used query is forgotten, and asked for again', () => {
    const documents = new Documents(null, { maxDocuments: 2 });
    const queries = [1, 2, 3].map((i) => apolloQuery(`{ n(i: ${i}) }`));
    const persisted = (sha256Hash: string) => ({ persistedQuery: { version: 1, sha256Hash } });
    for (const { query, sha256Hash } of queries) {
      documents.resolve({ query, extensions: persisted(sha256Hash) });
    }
    const hashOnly = ({ sha256Hash }: { sha256Hash: string }) => {
      try {
        return documents.resolve({ extensions: persisted(sha256Hash) }).query;
      } catch (error) {
        return (error as GraphQLError).extensions['code'];
      }
    };
    expect(hashOnly(queries[0]!)).toBe('PERSISTED_QUERY_NOT_FOUND');
    expect(hashOnly(queries[1]!)).toBe(queries[1]!.query);
    expect(hashOnly(queries[2]!)).toBe(queries[2]!.query);
  });
});
