import { setTimeout as sleep } from 'node:timers/promises';
import { getIntrospectionQuery } from 'graphql';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { captureLog } from '../helpers/capture-log.js';
import { startRedis, type RedisServer } from '../helpers/start-redis.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';
import {
  NO_CACHE,
  SMALL_SIZES,
  spentOn,
  startGateway,
  type Gateway,
  type GatewayOptions,
} from '../helpers/start-stack.js';

// Which answers are kept for repeat views (src/answers/), what they may push out of the cache,
// and what a 401 of the service for their key does to them. The settings users run (the page
// cache on, its TTL of 60 s), unless a suite says which it changes and why.

const ROUNDS = `query Rounds($first: Int!) { fundingEvents(first: $first) { nodes { uuid round company { name } } } }`;
const COMPANIES = `query Companies { companies(first: 3) { nodes { name domain } } }`;
/** Another operation that needs the very page of {@link COMPANIES}: the page cache, not an answer. */
const COMPANIES_AGAIN = `query CompaniesAgain { companies(first: 3) { nodes { name } } }`;

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, quiet: true, sizes: SMALL_SIZES });
});
afterAll(() => sandbox?.close());

const gateways: Gateway[] = [];
async function gateway(options: GatewayOptions = {}) {
  const started = await startGateway(sandbox, options);
  gateways.push(started);
  return started;
}
beforeEach(() => sandbox.reset());
afterEach(async () => {
  await Promise.all(gateways.splice(0).map((started) => started.close()));
});

/** A key of its own for each test: a revoked key stays revoked across `sandbox.reset()`. */
let keys = 0;
function newKey(credits = 1_000_000): string {
  const key = `answer-keeping-key-${++keys}`;
  sandbox.addKey(key, { credits });
  return key;
}

/** The code of a response's first error. */
const codeOf = (response: { errors?: { extensions?: Record<string, unknown> }[] }) =>
  response.errors?.[0]?.extensions?.['code'];

/** POSTs the introspection query GraphiQL and codegen tools send, with `key`. */
async function introspect(gw: Gateway, key: string) {
  const response = await fetch(gw.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ query: getIntrospectionQuery() }),
  });
  return (await response.json()) as { data?: { __schema?: unknown } };
}

describe('only an answer the service accepted pages for, for that key, is kept', () => {
  it('an introspection (no page), or a key the service refuses, runs again each time', async () => {
    const log = captureLog('info');
    const gw = await gateway({ logger: log.logger });
    for (let i = 0; i < 2; i++) {
      expect((await introspect(gw, 'anon-1')).data?.__schema).toBeTruthy();
      expect(codeOf(await gw.gql(COMPANIES, {}, { key: 'anon-1' }))).toBe('UNAUTHORIZED');
    }
    const lines = log.lines.filter((line) => line.msg === 'operation');
    expect(lines).toHaveLength(4);
    expect(lines.filter((line) => line['answered'])).toEqual([]);
    // Each refused query was sent, and refused, again.
    expect(sandbox.requestLog().map((entry) => entry.status)).toEqual([401, 401]);
  });
});

describe('kept answers never push out pages (CACHE_MAX_MB=1 here, so that a few dozen answers would fill it)', () => {
  it("neither made-up keys nor one key's many answers make another key pay again for a page within its TTL", async () => {
    const gw = await gateway({ config: { cacheMaxMb: 1 } });
    // Key A pays for a 100-record page (some 130 KB of the service's JSON).
    const paid = await gw.gql(`query Paid { fundingEvents(first: 100) { nodes { uuid round } } }`);
    expect(paid.extensions!.credits).toMatchObject({ used: 100, saved: 0 });

    // 40 introspections (some 70 KB of answer each) under made-up keys, with no credit...
    for (let i = 0; i < 40; i++) {
      expect((await introspect(gw, `anon-${i}`)).data?.__schema).toBeTruthy();
    }
    // ...and 40 distinct answers (some 30 KB each) of key B, all from one page of B's.
    const b = newKey();
    for (let i = 0; i < 40; i++) {
      const many = await gw.gql(
        `query B${i} { fundingEvents(first: 100) { nodes { uuid round amountUsdCents company { name domain description } } } }`,
        {},
        { key: b },
      );
      expect(many.errors).toBeUndefined();
    }
    sandbox.reset();

    // A asks again for the same page in another operation (no kept answer can serve it): the
    // page cache does, for nothing.
    const again = await gw.gql(`query PaidAgain { fundingEvents(first: 100) { nodes { uuid } } }`);
    expect(again.errors).toBeUndefined();
    expect(again.extensions).toMatchObject({
      credits: { used: 0, saved: 100 },
      upstreamRequests: 0,
    });
    expect(spentOn(sandbox)).toEqual({ requests: 0, credits: 0 });
  });
});

/**
 * A key answered, its answer kept and a page of another query cached; then the service revokes
 * the key. `instances` are the gateways that share what is kept (one, or two on one Redis).
 */
async function revokedAfterKeeping(instances: Gateway[]) {
  const first = instances[0]!;
  const key = newKey();
  const ran = await first.gql(ROUNDS, { first: 3 }, { key });
  expect(ran.extensions!.credits).toMatchObject({ used: 3 });
  for (const instance of instances) {
    const repeat = await instance.gql(ROUNDS, { first: 3 }, { key });
    expect(repeat.extensions).toMatchObject({
      credits: { used: 0, saved: 3 },
      upstreamRequests: 0,
    });
  }
  expect((await first.gql(COMPANIES, {}, { key })).extensions!.credits).toMatchObject({ used: 3 });
  sandbox.revokeKey(key);
  sandbox.reset();

  // A run that fetches fresh meets the 401...
  const fresh = await first.gql(ROUNDS, { first: 3 }, { key, headers: NO_CACHE });
  expect(codeOf(fresh)).toBe('UNAUTHORIZED');
  // ...and from then on nothing kept for the key answers, on any instance: neither the answer
  // nor the pages. Each request is sent, and refused.
  for (const instance of instances) {
    const repeat = await instance.gql(ROUNDS, { first: 3 }, { key });
    expect(repeat.data?.fundingEvents ?? null).toBeNull();
    expect(codeOf(repeat)).toBe('UNAUTHORIZED');
    const fromPages = await instance.gql(COMPANIES_AGAIN, {}, { key });
    expect(fromPages.data?.companies ?? null).toBeNull();
    expect(codeOf(fromPages)).toBe('UNAUTHORIZED');
  }
  expect(sandbox.requestLog().map((entry) => entry.status)).toEqual(
    Array.from({ length: 1 + 2 * instances.length }, () => 401),
  );

  // The key valid again: a run succeeds, and its answer is kept and shared again.
  sandbox.addKey(key);
  sandbox.reset();
  const back = await first.gql(ROUNDS, { first: 3 }, { key });
  expect(back.extensions!.credits).toMatchObject({ used: 3 });
  for (const instance of instances) {
    const repeat = await instance.gql(ROUNDS, { first: 3 }, { key });
    expect(repeat.data).toEqual(back.data);
    expect(repeat.extensions).toMatchObject({
      credits: { used: 0, saved: 3 },
      upstreamRequests: 0,
    });
  }
  expect(spentOn(sandbox)).toEqual({ requests: 1, credits: 3 });
}

describe("the service's 401 for a key drops everything kept for it", () => {
  it('in memory: the answer and the pages, until a run with the key succeeds again', async () => {
    await revokedAfterKeeping([await gateway()]);
  });

  it('after a 402, what was already paid is still served: the answer and the pages', async () => {
    const gw = await gateway();
    const key = newKey(3);
    const paid = await gw.gql(ROUNDS, { first: 3 }, { key });
    expect(paid.extensions!.credits).toMatchObject({ used: 3 });
    const refused = await gw.gql(ROUNDS, { first: 3 }, { key, headers: NO_CACHE });
    expect(codeOf(refused)).toBe('PAYMENT_REQUIRED');
    const repeat = await gw.gql(ROUNDS, { first: 3 }, { key });
    expect(repeat.data).toEqual(paid.data);
    expect(repeat.extensions).toMatchObject({
      credits: { used: 0, saved: 3 },
      upstreamRequests: 0,
    });
    const fromPage = await gw.gql(
      `query RoundsAgain { fundingEvents(first: 3) { nodes { uuid } } }`,
      {},
      { key },
    );
    expect(fromPage.errors).toBeUndefined();
    expect(fromPage.extensions).toMatchObject({ credits: { saved: 3 }, upstreamRequests: 0 });
    expect(sandbox.requestLog().map((entry) => entry.status)).toEqual([200, 402]);
  });

  describe('in Redis (REDIS_URL: this suite starts its own)', () => {
    let redis: RedisServer;
    beforeAll(async () => {
      redis = await startRedis();
    });
    afterAll(() => redis?.stop());

    it('two instances: neither serves what was kept once one has seen the 401', async () => {
      const config = { redisUrl: redis.url };
      await revokedAfterKeeping([await gateway({ config }), await gateway({ config })]);
    });

    it('a 401 seen while Redis is cut off reaches Redis, for every instance, once it answers again', async () => {
      const link = await startTcpProxy(redis.port);
      try {
        const a = await gateway({ config: { redisUrl: link.url } });
        const b = await gateway({ config: { redisUrl: redis.url } });
        const key = newKey();
        await a.gql(ROUNDS, { first: 3 }, { key });
        expect((await b.gql(ROUNDS, { first: 3 }, { key })).extensions!.upstreamRequests).toBe(0);
        sandbox.revokeKey(key);

        link.cut();
        expect(codeOf(await a.gql(ROUNDS, { first: 3 }, { key, headers: NO_CACHE }))).toBe(
          'UNAUTHORIZED',
        );
        link.restore();
        // Instance a sends the revocation again until Redis takes it; then b too stops serving.
        let repeat = await b.gql(ROUNDS, { first: 3 }, { key });
        for (let waited = 0; codeOf(repeat) !== 'UNAUTHORIZED' && waited < 5_000; waited += 100) {
          await sleep(100);
          repeat = await b.gql(ROUNDS, { first: 3 }, { key });
        }
        expect(repeat.data?.fundingEvents ?? null).toBeNull();
        expect(codeOf(repeat)).toBe('UNAUTHORIZED');
        expect(codeOf(await a.gql(ROUNDS, { first: 3 }, { key }))).toBe('UNAUTHORIZED');
      } finally {
        await link.close();
      }
    });
  });
});
