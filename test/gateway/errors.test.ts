import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createGateway } from '../../src/create-gateway.js';
import { defaultConfig } from '../../src/config.js';
import { startStack, type Stack, NO_CACHE } from '../helpers/start-stack.js';

let stack: Stack;
beforeAll(async () => {
  // Counts upstream requests and credits: every operation asks for fresh pages.
  // The fault cases run one after another: the breaker (its own suite) would open between them.
  stack = await startStack({
    config: { upstreamTimeoutMs: 300, breakerFailures: 10_000 },
    headers: NO_CACHE,
  });
});
afterAll(() => stack?.close());
beforeEach(() => stack.sandbox.reset());

const LIST = `{ fundingEvents(first: 3) { nodes { uuid } } }`;

describe("the caller's key", () => {
  it('is taken from X-API-Key or Authorization: Bearer and forwarded as X-API-Key', async () => {
    stack.sandbox.addKey('key-a', { credits: 100 });
    const viaHeader = await stack.gql(LIST, {}, { key: 'key-a' });
    const viaBearer = await stack.gql(
      LIST,
      {},
      { key: null, headers: { authorization: 'Bearer key-a' } },
    );
    expect(viaHeader.data).toEqual(viaBearer.data);
    expect(stack.sandbox.credits('key-a')).toBe(94);
    expect(viaBearer.extensions!.credits).toEqual({
      used: 3,
      saved: 0,
      remaining: 94,
      estimate: 3,
      budget: 1000,
    });
  });

  it('is never reused for another request', async () => {
    stack.sandbox.addKey('key-b', { credits: 100 });
    await stack.gql(LIST, {}, { key: 'key-b' });
    const anonymous = await stack.gql(LIST, {}, { key: null });
    expect(anonymous.errors![0]!.extensions!.code).toBe('UNAUTHORIZED');
    expect(stack.sandbox.requestLog()).toHaveLength(1);
    expect(stack.sandbox.credits('key-b')).toBe(97);
  });

  it('is not needed for introspection', async () => {
    const response = await stack.gql(`{ __schema { queryType { name } } }`, {}, { key: null });
    expect(response.data.__schema.queryType.name).toBe('Query');
    expect(response.extensions).toEqual({
      credits: { used: 0, saved: 0, remaining: null, estimate: 0, budget: 1000 },
      upstreamRequests: 0,
      upstreamRetries: 0,
    });
  });

  it('missing: a field that needs the upstream fails with UNAUTHORIZED and makes no request', async () => {
    const response = await stack.gql(LIST, {}, { key: null });
    expect(response.data).toEqual({ fundingEvents: null });
    expect(response.errors![0]).toMatchObject({
      path: ['fundingEvents'],
      message: expect.stringContaining('X-API-Key'),
      extensions: { code: 'UNAUTHORIZED' },
    });
    expect(stack.sandbox.requestLog()).toHaveLength(0);
  });
});

describe('HTTP', () => {
  it('serves GET /graphql as well as POST', async () => {
    const url = `${stack.url}?query=${encodeURIComponent(LIST)}`;
    const response = await fetch(url, {
      headers: { 'x-api-key': stack.sandbox.keys.demo, accept: 'application/json' },
    });
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body.data.fundingEvents.nodes).toHaveLength(3);
    expect(body.extensions.credits.used).toBe(3);
  });
});

describe('callers are kept apart', () => {
  it('concurrent operations with different keys each spend their own credits', async () => {
    const a = stack.sandbox.addKey('caller-a', { credits: 1000 });
    const b = stack.sandbox.addKey('caller-b', { credits: 1000 });
    // Distinct operations (2 + i records): concurrent equal pages of one key would be joined.
    const responses = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        stack.gql(
          `{ companies(first: ${2 + i}) { nodes { uuid } } }`,
          {},
          {
            key: i % 2 ? 'caller-b' : 'caller-a',
          },
        ),
      ),
    );
    const paidBy = (parity: number) =>
      Array.from({ length: 12 }, (_, i) => (i % 2 === parity ? 2 + i : 0)).reduce((x, y) => x + y);
    expect(stack.sandbox.credits('caller-a')).toBe(1000 - paidBy(0));
    expect(stack.sandbox.credits('caller-b')).toBe(1000 - paidBy(1));
    responses.forEach((response, i) => {
      expect(response.extensions!.credits.used).toBe(2 + i);
      expect(response.extensions!.credits.remaining).toBeGreaterThanOrEqual(1000 - paidBy(i % 2));
    });
    const byWorkspace = stack.sandbox.requestLog().map((e) => e.workspace);
    expect(byWorkspace.filter((w) => w === a)).toHaveLength(6);
    expect(byWorkspace.filter((w) => w === b)).toHaveLength(6);
  });

  it("a record one caller fetched is not served to another from the gateway's memory", async () => {
    const first = await stack.gql(`{ fundingEvents(first: 1) { nodes { company { id } } } }`);
    const companyId = first.data.fundingEvents.nodes[0].company.id;
    const blocked = await stack.gql(
      `query ($id: ID!) { node(id: $id) { id } }`,
      { id: companyId },
      {
        key: stack.sandbox.keys.blocked,
      },
    );
    expect(blocked.data.node).toBeNull();
    expect(blocked.errors![0]!.extensions!.code).toBe('FORBIDDEN');
  });
});

describe('upstream error codes reach the field that caused them', () => {
  it.each([
    ['an unknown key', 'no-such-key', 'UNAUTHORIZED'],
    ['a workspace without credits', 'no-credit-key', 'PAYMENT_REQUIRED'],
    ['a blocked key', 'blocked-key', 'FORBIDDEN'],
  ])('%s: %s', async (_what, key, code) => {
    const response = await stack.gql(LIST, {}, { key });
    expect(response.data).toEqual({ fundingEvents: null });
    expect(response.errors![0]).toMatchObject({
      path: ['fundingEvents'],
      message: expect.stringMatching(/^Business-Signals API: /),
      extensions: { code, requestId: expect.stringMatching(/^[0-9a-f-]{36}$/) },
    });
  });

  it('records already paid for survive a later page that fails', async () => {
    stack.sandbox.addKey('seven-credits', { credits: 7 });
    // The sandbox serves a page only up to the credits left (7 of 20), then PAYMENT_REQUIRED.
    const response = await stack.gql(
      `{ fundingEvents(first: 20) { nodes { uuid } pageInfo { hasNextPage endCursor } } }`,
      {},
      { key: 'seven-credits' },
    );
    expect(response.data.fundingEvents.nodes).toHaveLength(7);
    expect(response.data.fundingEvents.pageInfo.hasNextPage).toBe(true);
    expect(response.errors).toEqual([
      expect.objectContaining({
        path: ['fundingEvents'],
        extensions: expect.objectContaining({ code: 'PAYMENT_REQUIRED' }),
      }),
    ]);
    expect(response.extensions).toEqual({
      credits: { used: 7, saved: 0, remaining: 0, estimate: 20, budget: 1000 },
      upstreamRequests: 2,
      upstreamRetries: 0,
    });
    const rest = await stack.rest('funding-events?limit=7');
    expect(response.data.fundingEvents.nodes.map((n: any) => n.uuid)).toEqual(
      rest.data.map((r: any) => r.id),
    );
  });

  it('TOO_MANY_REQUESTS carries retryAfter in seconds', async () => {
    // Longer than RETRY_AFTER_MAX_MS: answered at once (a shorter one is waited out: retries.test.ts).
    stack.sandbox.scriptFaults([{ kind: 'tooManyRequests', retryAfter: 30 }]);
    const response = await stack.gql(LIST);
    expect(response.errors?.[0]).toMatchObject({
      extensions: { code: 'TOO_MANY_REQUESTS', retryAfter: 30, requestId: expect.any(String) },
    });
  });

  it('INVALID_INPUT from the upstream passes through with its message', async () => {
    // The gateway checks every rule it knows; a value only the service refuses still arrives
    // as INVALID_INPUT. A cursor the sandbox did not issue is such a value, so build one.
    const { encodeCursor, fingerprint } = await import('../../src/pagination/cursor-codec.js');
    const forged = encodeCursor(
      { upstream: 'forged-upstream-cursor', skip: 0, done: false },
      fingerprint('companies?'),
      defaultConfig.cursorSecret,
    );
    const response = await stack.gql(
      `query ($c: String) { companies(after: $c) { nodes { uuid } } }`,
      { c: forged },
    );
    expect(response.errors![0]).toMatchObject({
      message: expect.stringMatching(/^Business-Signals API: .*cursor/),
      extensions: { code: 'INVALID_INPUT', requestId: expect.any(String), upstreamStatus: 400 },
    });
  });

  it('other fields of the same query keep their data', async () => {
    const mixed = await stack.gql(
      `{ a: companies(first: 2) { nodes { uuid } } b: companies(first: 2, after: "nope") { nodes { uuid } } }`,
    );
    expect(mixed.data.a.nodes).toHaveLength(2);
    expect(mixed.data.b).toBeNull();
  });
});

describe('an unusable upstream is UPSTREAM_UNAVAILABLE', () => {
  // A 500 and a dropped connection are transient: tried 3 times (UPSTREAM_RETRIES = 2) first.
  it.each([
    ['a 500', { serverError: 1 }, 3],
    ['a dropped connection', { drop: 1 }, 3],
    ['a malformed body', { malformed: 1 }, 1],
  ])('%s', async (_what, faults, requests) => {
    stack.sandbox.setFaults(faults);
    const response = await stack.gql(LIST);
    expect(response.data).toEqual({ fundingEvents: null });
    expect(response.errors![0]).toMatchObject({
      path: ['fundingEvents'],
      extensions: { code: 'UPSTREAM_UNAVAILABLE' },
    });
    expect(response.extensions).toMatchObject({
      credits: { used: 0 },
      upstreamRequests: requests,
      upstreamRetries: requests - 1,
    });
    expect(stack.sandbox.requestLog()).toHaveLength(requests);
  });

  it('a timeout', async () => {
    stack.sandbox.setLatency({ fixedMs: 1_000 });
    const response = await stack.gql(LIST);
    expect(response.errors![0]).toMatchObject({
      message: expect.stringContaining('no complete answer within 300 ms of being sent'),
      extensions: { code: 'UPSTREAM_UNAVAILABLE' },
    });
  });

  it('an unreachable service', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const gateway = await createGateway(
      { ...defaultConfig, upstreamTimeoutMs: 500 },
      { upstreamUrl: `http://127.0.0.1:${port}`, processMetrics: false },
    );
    const response = await gateway.app.fetch('http://gateway/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'k' },
      body: JSON.stringify({ query: LIST }),
    });
    const body = await response.json();
    expect(body.errors[0]).toMatchObject({
      message: expect.stringContaining('connection refused'),
      extensions: { code: 'UPSTREAM_UNAVAILABLE' },
    });
    await gateway.close();
  });
});

describe('unexpected internal errors are masked', () => {
  it('a resolver crash reaches the client as "Unexpected error."', async () => {
    // A success envelope whose `sources` is not a list breaks the gateway's assumptions.
    const server: Server = createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          success: true,
          data: [{ id: '66666666-6666-4666-8666-666666666666', sources: 5 }],
          pagination: { hasMore: false, nextCursor: null },
          meta: { endpoint: 'x', creditsUsed: 1, creditsRemaining: 5 },
        }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const gateway = await createGateway(
      { ...defaultConfig, upstreamTimeoutMs: 500 },
      {
        upstreamUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        processMetrics: false,
      },
    );
    const response = await gateway.app.fetch('http://gateway/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'k' },
      body: JSON.stringify({ query: `{ fundingEvents { nodes { uuid sources { url } } } }` }),
    });
    const body = await response.json();
    expect(body.errors[0].message).toBe('Unexpected error.');
    expect(body.errors[0].path).toEqual(['fundingEvents', 'nodes', 0, 'sources']);
    expect(body.data.fundingEvents.nodes[0].uuid).toBe('66666666-6666-4666-8666-666666666666');
    await gateway.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
});

describe('extensions.credits', () => {
  it('sums creditsUsed over the operation and keeps the freshest creditsRemaining', async () => {
    stack.sandbox.addKey('ledger-key', { credits: 1000 });
    const response = await stack.gql(
      `{ a: companies(first: 4) { nodes { uuid } } b: investors(first: 6) { nodes { uuid } } }`,
      {},
      { key: 'ledger-key' },
    );
    expect(response.extensions).toEqual({
      credits: { used: 10, saved: 0, remaining: 990, estimate: 10, budget: 1000 },
      upstreamRequests: 2,
      upstreamRetries: 0,
    });
    expect(stack.sandbox.credits('ledger-key')).toBe(990);
  });
});
