import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { scrape, valueOf } from '../helpers/prometheus.js';
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

// Pages and kept answers while the shared Redis (REDIS_URL) is slow, down, restarted empty or
// cut off from one instance: each fault is made here, to a redis-server this suite starts, and
// what the service charged is read from the sandbox's request log. The settings users run (the
// page cache on, its TTL of 60 s), with REDIS_URL.

const ROUNDS = `query Rounds { fundingEvents(first: 10) { nodes { uuid round company { name } } } }`;
/** Another operation over the very page of {@link ROUNDS}: served by the page cache, not an answer. */
const ROUNDS_AGAIN = `query RoundsAgain { fundingEvents(first: 10) { nodes { uuid } } }`;
const COMPANIES = `query Companies { companies(first: 5) { nodes { name domain } } }`;

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, quiet: true, sizes: SMALL_SIZES });
});
afterAll(() => sandbox?.close());

/** A redis-server of each test's own: the faults a test makes end with it. */
let redis: RedisServer;

const gateways: Gateway[] = [];
async function gateway(options: GatewayOptions = {}) {
  const started = await startGateway(sandbox, {
    ...options,
    config: { redisUrl: redis.url, ...options.config },
  });
  gateways.push(started);
  return started;
}
beforeEach(async () => {
  sandbox.reset();
  // DEBUG allowed from loopback: a test makes Redis slow with DEBUG SLEEP.
  redis = await startRedis(['--enable-debug-command', 'local']);
});
afterEach(async () => {
  sandbox.setLatency({ fixedMs: 0 });
  await Promise.all(gateways.splice(0).map((started) => started.close()));
  await redis.stop();
});

/** Upstream requests and credits the sandbox saw since the last reset. */
const spent = () => spentOn(sandbox);

/** A key of its own, for a test that revokes it (a revoked key stays so across resets). */
let keys = 0;
function newKey(): string {
  const key = `redis-faults-key-${++keys}`;
  sandbox.addKey(key, { credits: 1_000_000 });
  return key;
}

/** The code of a response's first error. */
const codeOf = (response: { errors?: { extensions?: Record<string, unknown> }[] }) =>
  response.errors?.[0]?.extensions?.['code'];

/** `gateway_redis_up` of `gw`: 1 while it asks Redis, 0 while it does not. */
async function redisUp(gw: Gateway): Promise<number> {
  return valueOf(await scrape(`${gw.origin}/metrics`), 'gateway_redis_up');
}

/** Waits until `gw`'s link to Redis is in `state` (it probes once a second). */
async function until(gw: Gateway, state: 0 | 1, withinMs = 5_000): Promise<void> {
  for (const started = Date.now(); Date.now() - started < withinMs; await sleep(50)) {
    if ((await redisUp(gw)) === state) return;
  }
  throw new Error(`gateway_redis_up stayed ${1 - state} for ${withinMs} ms`);
}

/** Asserts that `response` was answered without a request or a credit: from what was kept. */
function expectKept(response: Awaited<ReturnType<Gateway['gql']>>, saved?: number) {
  expect(response.errors).toBeUndefined();
  expect(response.extensions).toMatchObject({ credits: { used: 0 }, upstreamRequests: 0 });
  if (saved !== undefined) expect(response.extensions!.credits.saved).toBe(saved);
}

/** Calls of each command Redis has run since its statistics were last reset. */
async function commandCalls(client: Redis): Promise<Record<string, number>> {
  const calls: Record<string, number> = {};
  for (const [, name, count] of (await client.info('commandstats')).matchAll(
    /^cmdstat_([\w|]+):calls=(\d+)/gm,
  )) {
    calls[name!] = Number(count);
  }
  return calls;
}

describe('Redis killed, then restarted empty', () => {
  it('while it is down each instance serves what it kept and what it fetches since; once back, each page is fetched once more', async () => {
    const [a, b] = [await gateway(), await gateway()];
    const ran = await a.gql(ROUNDS);
    expect(ran.extensions!.credits).toMatchObject({ used: 10, saved: 0 });
    // b reads the answer, and (another operation) the page, from Redis: each is copied to b's memory.
    expectKept(await b.gql(ROUNDS), 10);
    expectKept(await b.gql(ROUNDS_AGAIN), 10);
    expect(spent()).toEqual({ requests: 1, credits: 10 });

    await redis.stop();
    sandbox.reset();
    for (const instance of [a, b]) {
      for (let i = 0; i < 3; i++) {
        const repeat = await instance.gql(ROUNDS);
        expect(repeat.data).toEqual(ran.data);
        expectKept(repeat, 10);
      }
      expectKept(await instance.gql(ROUNDS_AGAIN));
    }
    await until(a, 0);
    await until(b, 0);
    // A page first asked during the outage: fetched once per instance, then kept by each.
    for (const instance of [a, b]) {
      expect((await instance.gql(COMPANIES)).extensions!.credits).toMatchObject({ used: 5 });
      expectKept(await instance.gql(COMPANIES), 5);
    }
    expect(spent()).toEqual({ requests: 2, credits: 10 });

    // Back, empty: Redis no longer has what says the key was not revoked meanwhile (its epoch),
    // so each instance drops what it kept for the key, at its first read, and one fetches again.
    await redis.restart();
    await until(a, 1);
    await until(b, 1);
    sandbox.reset();
    expect((await a.gql(ROUNDS)).extensions!.credits).toMatchObject({ used: 10, saved: 0 });
    expectKept(await b.gql(ROUNDS), 10);
    expectKept(await a.gql(ROUNDS), 10);
    expect(spent()).toEqual({ requests: 1, credits: 10 });
  });
});

describe('Redis hung (SIGSTOP) or slow (DEBUG SLEEP: each command past its 500 ms timeout)', () => {
  /**
   * Runs a query, stalls Redis with `stall`, sends 20 repeats (the answer, and the page through
   * another operation), ends the stall with `end`: each repeat is served from memory at no cost,
   * and Redis was sent at most one command meanwhile, besides the link's probes.
   */
  async function repeatsWhileStalled(stall: (stats: Redis) => () => Promise<unknown>) {
    const gw = await gateway();
    const ran = await gw.gql(ROUNDS);
    expect(ran.extensions!.credits).toMatchObject({ used: 10 });
    const stats = new Redis(redis.url);
    try {
      await stats.config('RESETSTAT');
      const end = stall(stats);
      sandbox.reset();
      for (let i = 0; i < 10; i++) {
        const repeat = await gw.gql(ROUNDS);
        expect(repeat.data).toEqual(ran.data);
        expectKept(repeat, 10);
        expectKept(await gw.gql(ROUNDS_AGAIN), 10);
      }
      expect(spent()).toEqual({ requests: 0, credits: 0 });
      expect(await redisUp(gw)).toBe(0);

      await end();
      // What was sent to Redis during the stall, run now: for 20 requests, at most the one command
      // that timed out and took the link down (a page read, or the alerts' sweep when it came
      // first), besides the link's probes (a PING a second). A link that asked Redis per request
      // would show 20 or more.
      const {
        ping: _probes,
        'config|resetstat': _resetstat,
        debug: _sleep,
        ...others
      } = await commandCalls(stats);
      const sent = Object.values(others).reduce((sum, calls) => sum + calls, 0);
      expect(sent, JSON.stringify(others)).toBeLessThanOrEqual(1);

      await until(gw, 1);
      expectKept(await gw.gql(ROUNDS), 10);
      expect(spent()).toEqual({ requests: 0, credits: 0 });
    } finally {
      stats.disconnect();
    }
  }

  it('hung: one command waits out its timeout, then nothing asks Redis; every repeat is served from memory at no cost', async () => {
    await repeatsWhileStalled(() => {
      redis.pause();
      return async () => redis.resume();
    });
  });

  it('slow: the same', async () => {
    await repeatsWhileStalled((stats) => {
      const sleeping = stats.call('DEBUG', 'SLEEP', '3');
      return () => sleeping;
    });
  });

  it('a claim on a fetch that could not be given up while Redis hung is given up as soon as it answers', async () => {
    const a = await gateway();
    const b = await gateway();
    sandbox.setLatency({ fixedMs: 800 });
    // a claims the page's fetch in Redis, and sends it.
    const claimed = a.gql(COMPANIES);
    await sleep(300);
    redis.pause();
    // Meanwhile a Redis command of a's times out: its link goes down before the page comes, so
    // it can neither store the page in Redis nor give up its claim there.
    expect((await a.gql(ROUNDS)).errors).toBeUndefined();
    expect((await claimed).extensions!.credits).toMatchObject({ used: 5 });
    redis.resume();
    await until(a, 1);
    // Given up within a second of the link's return (its lease, renewed by the commands Redis ran
    // late, would keep it 3 s).
    const client = new Redis(redis.url);
    try {
      let claims = await client.keys('*:claim:*');
      for (const started = Date.now(); claims.length > 0 && Date.now() - started < 1_000;) {
        await sleep(50);
        claims = await client.keys('*:claim:*');
      }
      expect(claims).toEqual([]);
    } finally {
      client.disconnect();
    }
    sandbox.setLatency({ fixedMs: 0 });
    sandbox.reset();
    const other = await b.gql(COMPANIES);
    expect(other.errors).toBeUndefined();
    expect(other.extensions!.credits).toMatchObject({ used: 5 });
    expect(spent()).toEqual({ requests: 1, credits: 5 });
  });
});

describe('an instance cut off from Redis (a TCP link the test cuts), the other not', () => {
  it('serves what it kept at no cost; a 401 the other saw meanwhile reaches it when the link is back', async () => {
    const link = await startTcpProxy(redis.port);
    try {
      const a = await gateway({ config: { redisUrl: link.url } });
      const b = await gateway();
      const key = newKey();
      const ran = await a.gql(ROUNDS, {}, { key });
      expect(ran.extensions!.credits).toMatchObject({ used: 10 });
      expectKept(await b.gql(ROUNDS, {}, { key }), 10);

      link.cut();
      sandbox.reset();
      expectKept(await a.gql(ROUNDS, {}, { key }), 10);
      expectKept(await a.gql(ROUNDS_AGAIN, {}, { key }), 10);
      await until(a, 0);

      // The service revokes the key; b meets the 401, which drops all kept for it in Redis.
      sandbox.revokeKey(key);
      expect(codeOf(await b.gql(ROUNDS, {}, { key, headers: NO_CACHE }))).toBe('UNAUTHORIZED');
      expect(codeOf(await b.gql(ROUNDS, {}, { key }))).toBe('UNAUTHORIZED');
      // The bound while cut off: a, which cannot hear of it, serves what it kept (within its TTL).
      expectKept(await a.gql(ROUNDS, {}, { key }), 10);

      link.restore();
      await until(a, 1);
      // Back on Redis: the key's epoch is gone there, so a drops what it kept, and asks.
      const repeat = await a.gql(ROUNDS, {}, { key });
      expect(repeat.data?.fundingEvents ?? null).toBeNull();
      expect(codeOf(repeat)).toBe('UNAUTHORIZED');
      const fromPage = await a.gql(ROUNDS_AGAIN, {}, { key });
      expect(fromPage.data?.fundingEvents ?? null).toBeNull();
      expect(codeOf(fromPage)).toBe('UNAUTHORIZED');
      expect(sandbox.requestLog().map((entry) => entry.status)).toEqual([401, 401, 401, 401]);
    } finally {
      await link.close();
    }
  });
});

describe('an instance cut off while it fetches a page it claimed', () => {
  it('the others wait for its claim no longer than its lease (3 s), then fetch the page themselves', async () => {
    // OPERATION_TIMEOUT_MS=5000 here: a claim that outlived its holder's link until it expires
    // (about 44 s with the defaults) would fail the operation instead.
    const link = await startTcpProxy(redis.port);
    try {
      const a = await gateway({ config: { redisUrl: link.url } });
      const b = await gateway({ config: { operationTimeoutMs: 5_000 } });
      sandbox.setLatency({ fixedMs: 1_000 });
      // a claims the page's fetch in Redis, and sends it; then it is cut off.
      const claimed = a.gql(COMPANIES);
      await sleep(300);
      link.cut();
      sandbox.setLatency({ fixedMs: 0 });
      const other = await b.gql(COMPANIES);
      expect(other.errors).toBeUndefined();
      expect(other.extensions!.credits).toMatchObject({ used: 5 });
      expect((await claimed).errors).toBeUndefined();
      // Each fetched it once: a alone while cut off, b once a's claim lapsed.
      expect(spent()).toEqual({ requests: 2, credits: 10 });
    } finally {
      await link.close();
    }
  });
});

describe('the local tier in front of Redis (CACHE_MAX_MB bounds it as it bounds the memory cache)', () => {
  it('holds at most its bound, shown in gateway_page_cache_bytes; a page it let go is served from Redis', async () => {
    // A bound of about one 20-event page (some 20 KB of JSON), not two.
    const gw = await gateway({ upstream: { cache: { ttlMs: 60_000, maxBytes: 30_000 } } });
    const seed = `{ fundingEvents(first: 20, round: ["seed"]) { nodes { uuid } } }`;
    const seriesA = `{ fundingEvents(first: 20, round: ["series_a"]) { nodes { uuid } } }`;
    await gw.gql(seed);
    await gw.gql(seriesA);
    expect(spent().requests).toBe(2);
    const held = valueOf(await scrape(`${gw.origin}/metrics`), 'gateway_page_cache_bytes');
    expect(held).toBeGreaterThan(10_000);
    // The pages' bound, and a quarter of it more for kept answers.
    expect(held).toBeLessThanOrEqual(30_000 * 1.25);
    // The seed page went out of memory to make room; Redis still has it. (A trailing space:
    // not the exact request again, whose small answer is kept, but the same page.)
    sandbox.reset();
    expectKept(await gw.gql(`${seed} `));
    expect(spent()).toEqual({ requests: 0, credits: 0 });
  });
});
