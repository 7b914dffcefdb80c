import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Config } from '../../src/config.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { captureLog, type LogLine } from '../helpers/capture-log.js';
import {
  AUDIENCE,
  ISSUER,
  sign,
  startIdentityProvider,
  type IdentityProvider,
  type SigningKey,
} from '../helpers/identity-provider.js';
import { scrape, valueOf } from '../helpers/prometheus.js';
import { startRedis, type RedisServer } from '../helpers/start-redis.js';
import {
  NO_CACHE,
  SMALL_SIZES,
  spentOn,
  startGateway,
  type Gateway,
  type GatewayOptions,
} from '../helpers/start-stack.js';

// Repeat views answered whole (src/answers/), with the settings users run: the page cache on,
// its TTL (60 s), the default budget. Suites that change one say which.

const ROUNDS = `query Rounds($first: Int!) { fundingEvents(first: $first) { nodes { uuid round company { name } } } }`;
const COMPANIES = `query Companies { companies(first: 3) { nodes { name domain } } }`;

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
  sandbox.setFaults({});
  await Promise.all(gateways.splice(0).map((started) => started.close()));
});

/** Upstream requests and credits the sandbox saw since the last reset. */
const spent = () => spentOn(sandbox);

/** The operation lines of a captured log. */
const operations = (lines: LogLine[]) => lines.filter((line) => line.msg === 'operation');

/** POSTs `body` as it is (its exact bytes) to `url`, and reads status, headers and JSON. */
async function post(url: string, body: string, headers: Record<string, string>) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
    body,
  });
  return {
    status: response.status,
    headers: response.headers,
    json: (await response.json()) as any,
  };
}

describe('a repeat view, answered whole', () => {
  it('the same request again: the same data, nothing run, no upstream request, truthful extensions', async () => {
    const log = captureLog('info');
    const gw = await gateway({ logger: log.logger });
    const first = await gw.gql(ROUNDS, { first: 4 });
    expect(first.errors).toBeUndefined();
    expect(first.extensions!.credits).toMatchObject({ used: 4, saved: 0 });
    expect(spent()).toEqual({ requests: 1, credits: 4 });

    sandbox.reset();
    const repeat = await gw.gql(ROUNDS, { first: 4 });
    expect(repeat.data).toEqual(first.data);
    expect(repeat.errors).toBeUndefined();
    expect(repeat.extensions).toEqual({
      credits: {
        used: 0,
        saved: 4,
        remaining: first.extensions!.credits.remaining,
        estimate: 4,
        budget: 1000,
      },
      upstreamRequests: 0,
      upstreamRetries: 0,
    });
    expect(spent()).toEqual({ requests: 0, credits: 0 });

    // The operation line says so; the run's did not.
    const [run, repeated] = operations(log.lines);
    expect(run).toMatchObject({ operation: 'Rounds', creditsUsed: 4 });
    expect(run!['answered']).toBeUndefined();
    expect(repeated).toMatchObject({
      operation: 'Rounds',
      outcome: 'ok',
      answered: true,
      creditsUsed: 0,
      creditsSaved: 4,
      creditsEstimate: 4,
      upstreamRequests: 0,
    });
    const metrics = await scrape(`${gw.origin}/metrics`);
    expect(valueOf(metrics, 'gateway_answers_repeated_total')).toBe(1);
    expect(valueOf(metrics, 'gateway_answers_repeated_credits_total')).toBe(4);
    expect(
      valueOf(metrics, 'gateway_operations_total', { operation: 'Rounds', outcome: 'ok' }),
    ).toBe(2);
  });

  it('the headers of the run: type, Cache-Control, Vary, CORS; its own request id and credit headers', async () => {
    const gw = await gateway({ config: { corsOrigins: ['https://app.example'] } });
    const body = JSON.stringify({ query: ROUNDS, variables: { first: 2 } });
    const headers = { 'x-api-key': sandbox.keys.demo, origin: 'https://app.example' };
    const run = await post(gw.url, body, { ...headers, 'x-request-id': 'run-1' });
    const repeat = await post(gw.url, body, { ...headers, 'x-request-id': 'repeat-1' });
    expect(repeat.json.data).toEqual(run.json.data);
    expect(repeat.json.extensions.upstreamRequests).toBe(0);
    for (const name of [
      'content-type',
      'cache-control',
      'vary',
      'access-control-allow-origin',
      'access-control-expose-headers',
    ]) {
      expect(repeat.headers.get(name), name).toBe(run.headers.get(name));
    }
    expect(run.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(repeat.headers.get('x-request-id')).toBe('repeat-1');
    expect(repeat.headers.get('x-credits-used')).toBe('0');
    expect(repeat.headers.get('x-credits-saved')).toBe('2');
    expect(repeat.headers.get('x-credits-remaining')).toBe(run.headers.get('x-credits-remaining'));
    expect(Number(repeat.headers.get('content-length'))).toBeGreaterThan(0);
  });

  it('a GET repeats too; a GET and a POST of the same query are two answers', async () => {
    const gw = await gateway();
    const url = `${gw.url}?query=${encodeURIComponent(COMPANIES)}`;
    const get = async () => {
      const response = await fetch(url, {
        headers: { 'x-api-key': sandbox.keys.demo, accept: 'application/json' },
      });
      return (await response.json()) as any;
    };
    const first = await get();
    expect(first.extensions.credits.used).toBe(3);
    const again = await get();
    expect(again.data).toEqual(first.data);
    expect(again.extensions.credits).toMatchObject({ used: 0, saved: 3 });
    expect(spent()).toEqual({ requests: 1, credits: 3 });
    // The POST runs once: its pages are in the page cache, so it is free, but it is run.
    const posted = await gw.gql(COMPANIES);
    expect(posted.data).toEqual(first.data);
    expect(posted.extensions!.credits).toMatchObject({ used: 0, saved: 3 });
  });

  it('other variables, another operation name or another key: each runs', async () => {
    const log = captureLog('info');
    const gw = await gateway({ logger: log.logger });
    const other = sandbox.addKey('answers-other-key', { credits: 1_000 });
    await gw.gql(ROUNDS, { first: 2 });
    await gw.gql(ROUNDS, { first: 3 });
    const otherKey = await gw.gql(ROUNDS, { first: 2 }, { key: 'answers-other-key' });
    expect(otherKey.extensions!.credits).toMatchObject({ used: 2, saved: 0 });
    // The other key's request reached the service with that key: no answer crosses keys.
    expect(sandbox.requestLog().map((entry) => entry.workspace)).toContain(other);
    expect(operations(log.lines).filter((line) => line['answered'])).toEqual([]);
  });

  it('a request without a key, or with a key the service refuses, never gets a kept answer', async () => {
    const gw = await gateway();
    const first = await gw.gql(ROUNDS, { first: 2 });
    expect(first.errors).toBeUndefined();
    const none = await gw.gql(ROUNDS, { first: 2 }, { key: null });
    expect(none.data?.fundingEvents ?? null).toBeNull();
    expect(none.errors?.[0]?.extensions?.['code']).toBe('UNAUTHORIZED');
    const wrong = await gw.gql(ROUNDS, { first: 2 }, { key: 'not-a-key-of-the-service' });
    expect(wrong.data?.fundingEvents ?? null).toBeNull();
    expect(wrong.errors?.[0]?.extensions?.['code']).toBe('UNAUTHORIZED');
  });

  it('an answer with an error is not kept: the repeat runs, and succeeds once the service does', async () => {
    const gw = await gateway();
    sandbox.setFaults({ serverError: 1 });
    const failed = await gw.gql(ROUNDS, { first: 2 });
    expect(failed.errors?.length).toBeGreaterThan(0);
    sandbox.setFaults({});
    sandbox.reset();
    const repeat = await gw.gql(ROUNDS, { first: 2 });
    expect(repeat.errors).toBeUndefined();
    expect(repeat.extensions!.credits).toMatchObject({ used: 2 });
    expect(spent()).toEqual({ requests: 1, credits: 2 });
  });

  it('Cache-Control: no-cache runs, pays, and its answer replaces the kept one', async () => {
    const gw = await gateway();
    await gw.gql(ROUNDS, { first: 2 });
    const fresh = await gw.gql(ROUNDS, { first: 2 }, { headers: NO_CACHE });
    expect(fresh.extensions!.credits).toMatchObject({ used: 2, saved: 0 });
    expect(spent()).toEqual({ requests: 2, credits: 4 });
    const repeat = await gw.gql(ROUNDS, { first: 2 });
    expect(repeat.extensions!.credits).toMatchObject({
      used: 0,
      saved: 2,
      remaining: fresh.extensions!.credits.remaining,
    });
    expect(spent()).toEqual({ requests: 2, credits: 4 });
  });

  it("reports the workspace's freshest balance, not the one of the answer's pages", async () => {
    const gw = await gateway();
    const first = await gw.gql(ROUNDS, { first: 2 });
    const later = await gw.gql(COMPANIES);
    expect(later.extensions!.credits.remaining).toBe(first.extensions!.credits.remaining! - 3);
    const repeat = await gw.gql(ROUNDS, { first: 2 });
    expect(repeat.extensions!.credits.remaining).toBe(later.extensions!.credits.remaining);
  });

  it('the budget keeps its meaning: below the estimate, refused as a run is; above, answered with it', async () => {
    const gw = await gateway();
    await gw.gql(ROUNDS, { first: 5 });
    const low = await gw.gql(ROUNDS, { first: 5 }, { headers: { 'x-credit-budget': '4' } });
    expect(low.errors?.[0]?.extensions).toMatchObject({
      code: 'CREDIT_BUDGET_EXCEEDED',
      estimate: 5,
      budget: 4,
    });
    const bad = await gw.gql(ROUNDS, { first: 5 }, { headers: { 'x-credit-budget': 'lots' } });
    expect(bad.errors?.[0]?.extensions?.['code']).toBe('BAD_REQUEST');
    const enough = await gw.gql(ROUNDS, { first: 5 }, { headers: { 'x-credit-budget': '5' } });
    expect(enough.extensions!.credits).toMatchObject({ used: 0, saved: 5, budget: 5 });
    const estimate = await gw.gql(
      ROUNDS,
      { first: 5 },
      { headers: { 'x-credit-estimate': 'only' } },
    );
    expect(estimate.data ?? null).toBeNull();
    expect(spent()).toEqual({ requests: 1, credits: 5 });
  });

  it('kept only while its pages are fresh (CACHE_TTL_SECONDS=1 here, to see it expire)', async () => {
    const gw = await gateway({ config: { cacheTtlSeconds: 1 } });
    await gw.gql(ROUNDS, { first: 2 });
    await sleep(1_200);
    const after = await gw.gql(ROUNDS, { first: 2 });
    expect(after.extensions!.credits).toMatchObject({ used: 2, saved: 0 });
    expect(spent()).toEqual({ requests: 2, credits: 4 });
  });

  it('an answer made of cached pages expires with its oldest page, not a full TTL later', async () => {
    const gw = await gateway({ config: { cacheTtlSeconds: 2 } });
    // The page is cached by one query, then a second one, answered from it, is kept.
    await gw.gql(ROUNDS, { first: 2 });
    await sleep(1_000);
    const named = `query Again { fundingEvents(first: 2) { nodes { uuid round company { name } } } }`;
    const fromPage = await gw.gql(named);
    expect(fromPage.extensions!.credits).toMatchObject({ used: 0, saved: 2 });
    await sleep(1_200);
    // 2.2 s after the page was fetched: the answer kept at 1 s is as old as its page, gone.
    const after = await gw.gql(named);
    expect(after.extensions!.credits).toMatchObject({ used: 2, saved: 0 });
  });

  it('CACHE_TTL_SECONDS=0 (the page cache off) keeps no answer either', async () => {
    const gw = await gateway({ config: { cacheTtlSeconds: 0 } });
    await gw.gql(ROUNDS, { first: 2 });
    const again = await gw.gql(ROUNDS, { first: 2 });
    expect(again.extensions!.credits).toMatchObject({ used: 2, saved: 0 });
    expect(spent()).toEqual({ requests: 2, credits: 4 });
  });
});

describe('a repeat view under a credit quota (CREDIT_QUOTA=12/hour here)', () => {
  it('is admitted as a run is: its estimate must fit what is left, and it takes nothing', async () => {
    const gw = await gateway({ config: { creditQuota: { credits: 12, windowSeconds: 3600 } } });
    const first = await gw.gql(ROUNDS, { first: 5 });
    expect(first.extensions!.credits).toMatchObject({ quota: { limit: 12, remaining: 7 } });
    const repeat = await gw.gql(ROUNDS, { first: 5 });
    expect(repeat.extensions!.credits).toMatchObject({ used: 0, saved: 5 });
    expect(repeat.extensions!.credits).toMatchObject({ quota: { limit: 12, remaining: 7 } });
    // Spend 4 more: 3 left, below the repeat's estimate of 5, so even a free repeat is refused.
    await gw.gql(ROUNDS, { first: 4 });
    const refused = await gw.gql(ROUNDS, { first: 5 });
    expect(refused.status).toBe(429);
    expect(refused.errors?.[0]?.extensions).toMatchObject({
      code: 'CREDIT_QUOTA_EXCEEDED',
      estimate: 5,
      limit: 12,
    });
  });
});

describe('a repeat view with AUTH_MODE=jwt', () => {
  let idp: IdentityProvider;
  let key: SigningKey;
  beforeAll(async () => {
    idp = await startIdentityProvider();
    key = await idp.addKey('k1');
  });
  afterAll(() => idp?.close());

  const jwtConfig = (): Partial<Config> => ({
    authMode: 'jwt',
    jwtJwksUrl: idp.jwksUrl,
    jwtIssuer: ISSUER,
    jwtAudience: AUDIENCE,
    upstreamApiKey: sandbox.keys.demo,
  });
  const asUser = (gw: Gateway, token: string | null) =>
    post(
      gw.url,
      JSON.stringify({ query: COMPANIES }),
      token ? { authorization: `Bearer ${token}` } : {},
    );

  it('two users of one workspace share it; no token, or a bad one, is refused as before', async () => {
    const gw = await gateway({ config: jwtConfig() });
    const alice = await asUser(gw, await sign(key, { sub: 'alice' }));
    expect(alice.json.extensions.credits).toMatchObject({ used: 3 });
    const bob = await asUser(gw, await sign(key, { sub: 'bob' }));
    expect(bob.json.data).toEqual(alice.json.data);
    expect(bob.json.extensions).toMatchObject({
      credits: { used: 0, saved: 3 },
      upstreamRequests: 0,
    });
    const none = await asUser(gw, null);
    expect(none.status).toBe(401);
    expect(none.json.data ?? null).toBeNull();
    const expired = await asUser(gw, await sign(key, { exp: Math.floor(Date.now() / 1000) - 60 }));
    expect(expired.status).toBe(401);
    expect(expired.json.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    expect(spent()).toEqual({ requests: 1, credits: 3 });
  });
});

describe('repeat views shared through Redis (REDIS_URL: this suite starts its own)', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(() => redis?.stop());

  it("one instance runs, another answers the repeat from Redis's copy", async () => {
    const log = captureLog('info');
    const a = await gateway({ config: { redisUrl: redis.url } });
    const b = await gateway({ config: { redisUrl: redis.url }, logger: log.logger });
    const first = await a.gql(ROUNDS, { first: 3 });
    expect(first.extensions!.credits).toMatchObject({ used: 3 });
    // An answer is written to Redis after its response is sent (behind what the link has
    // pending): shared with other instances once written.
    await answerWritten(redis);
    const repeat = await b.gql(ROUNDS, { first: 3 });
    expect(repeat.data).toEqual(first.data);
    expect(repeat.extensions).toMatchObject({
      credits: { used: 0, saved: 3, estimate: 3 },
      upstreamRequests: 0,
    });
    expect(operations(log.lines)[0]).toMatchObject({ answered: true });
    expect(spent()).toEqual({ requests: 1, credits: 3 });
  });
});

describe("a kept answer is named by the rules that let it run (the schema and the admission's settings)", () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(() => redis?.stop());

  it('an instance with TRUSTED_DOCUMENTS never serves the answer another kept of a free-text query', async () => {
    // Two instances on one Redis (REDIS_URL), as in a rolling deploy that turns the list on: A
    // runs any text, B only the listed documents (TRUSTED_DOCUMENTS, here an unrelated one).
    const a = await gateway({ config: { redisUrl: redis.url } });
    const b = await gateway({
      config: {
        redisUrl: redis.url,
        trustedDocuments: new Map([['listed', '{ __typename }']]),
      },
    });
    const body = JSON.stringify({ query: COMPANIES });
    const headers = { 'x-api-key': sandbox.keys.demo };
    const ran = await post(a.url, body, headers);
    expect(ran.json.data.companies.nodes).toHaveLength(3);
    const repeat = await post(a.url, body, headers);
    expect(repeat.json.extensions.credits).toMatchObject({ used: 0, saved: 3 });

    const refused = await post(b.url, body, headers);
    expect(refused.json.data ?? null).toBeNull();
    expect(refused.json.errors[0].extensions.code).toBe('PERSISTED_QUERY_ID_REQUIRED');
  });

  it('instances with other limits keep their answers apart', async () => {
    // A allows 16 levels of nesting (MAX_DEPTH, the default), B 3: B refuses what A answered.
    const a = await gateway({ config: { redisUrl: redis.url } });
    const b = await gateway({ config: { redisUrl: redis.url, maxDepth: 3 } });
    const body = JSON.stringify({ query: ROUNDS, variables: { first: 3 } });
    const headers = { 'x-api-key': sandbox.keys.demo };
    expect((await post(a.url, body, headers)).json.data.fundingEvents.nodes).toHaveLength(3);
    const refused = await post(b.url, body, headers);
    expect(refused.json.errors[0].extensions.code).toBe('MAX_DEPTH_EXCEEDED');
  });
});

/** Waits until a kept answer is in `redis` (bounded). */
async function answerWritten(redis: RedisServer): Promise<void> {
  const client = new Redis(redis.url, { lazyConnect: true });
  try {
    await vi.waitFor(
      async () => expect((await client.scan(0, 'MATCH', '*answer:*'))[1].length).toBeGreaterThan(0),
      { timeout: 5_000, interval: 20 },
    );
  } finally {
    client.disconnect();
  }
}
