import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { captureLog } from '../helpers/capture-log.js';
import { parseMetrics, valueOf } from '../helpers/prometheus.js';
import { startRedis, type RedisServer } from '../helpers/start-redis.js';
import {
  SMALL_SIZES,
  spentOn,
  startGateway,
  type Gateway,
  type GatewayOptions,
  type GraphQLResponse,
} from '../helpers/start-stack.js';

const LIST = `query Rounds { fundingEvents(first: 5) { nodes { uuid round company { name } } } }`;
const NO_CACHE = { 'cache-control': 'no-cache' };

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, quiet: true, sizes: SMALL_SIZES });
});
afterAll(() => sandbox?.close());

/** Upstream requests and credits the sandbox saw since the last reset. */
const spent = () => spentOn(sandbox);

const codeOf = (response: GraphQLResponse) => response.errors?.[0]?.extensions?.['code'];

/**
 * Stale pages, the same whichever store holds them: `store()` gives the settings that choose it;
 * each test gets a fresh gateway (a closed breaker) over an empty store.
 */
function describeStale(name: string, store: () => Partial<GatewayOptions['config']>) {
  describe(`stale pages on error (${name})`, () => {
    const gateways: Gateway[] = [];
    async function gateway(config: GatewayOptions['config'] = {}, options: GatewayOptions = {}) {
      const started = await startGateway(sandbox, {
        ...options,
        // A TTL of 1 s (60 by default), so that a page expires within the test.
        config: { cacheTtlSeconds: 1, ...store(), ...config },
      });
      gateways.push(started);
      return started;
    }
    /** Runs `query` once, waits `ms` (past the 1 s TTL), and makes the service fail every request. */
    async function cachedThenDown(gw: Gateway, ms = 1_200, key?: string) {
      const first = await gw.gql(LIST, {}, { key });
      expect(first.errors).toBeUndefined();
      await sleep(ms);
      sandbox.reset();
      sandbox.setFaults({ serverError: 1 });
      return first;
    }
    beforeEach(() => sandbox.reset());
    afterEach(async () => {
      sandbox.setFaults({});
      await Promise.all(gateways.splice(0).map((started) => started.close()));
    });

    it('2 s after a 1 s TTL, with every request failing 500: the same data, extensions.stale, 0 credits', async () => {
      const gw = await gateway();
      const first = await cachedThenDown(gw, 2_000);
      const served = await gw.gql(LIST);
      expect(served.errors).toBeUndefined();
      expect(served.data).toEqual(first.data);
      expect(served.extensions!.stale).toEqual([
        { endpoint: 'fundingEvents', ageSeconds: expect.any(Number) },
      ]);
      const [{ ageSeconds }] = served.extensions!.stale as [{ ageSeconds: number }];
      expect(ageSeconds).toBeGreaterThanOrEqual(2);
      expect(ageSeconds).toBeLessThan(10);
      expect(served.extensions!.credits).toMatchObject({ used: 0, saved: 5 });
      // The request and its retries were sent, and failed: nothing charged.
      expect(served.extensions).toMatchObject({ upstreamRequests: 3, upstreamRetries: 2 });
      expect(spent()).toEqual({ requests: 3, credits: 0 });
      expect(sandbox.requestLog().map((entry) => entry.status)).toEqual([500, 500, 500]);
    });

    it('Cache-Control: no-cache refuses the stale page: UPSTREAM_UNAVAILABLE', async () => {
      const gw = await gateway();
      await cachedThenDown(gw);
      const refused = await gw.gql(LIST, {}, { headers: NO_CACHE });
      expect(codeOf(refused)).toBe('UPSTREAM_UNAVAILABLE');
      expect(refused.extensions!.stale).toBeUndefined();
    });

    it('a 402 is never hidden by a stale page: PAYMENT_REQUIRED', async () => {
      const gw = await gateway();
      // The low-credit workspace has 5 credits: the first page spends them all.
      await gw.gql(LIST, {}, { key: sandbox.keys.lowCredit });
      await sleep(1_200);
      const broke = await gw.gql(LIST, {}, { key: sandbox.keys.lowCredit });
      expect(codeOf(broke)).toBe('PAYMENT_REQUIRED');
      expect(broke.data?.fundingEvents ?? null).toBeNull();
      expect(broke.extensions!.stale).toBeUndefined();
      expect(sandbox.requestLog().map((entry) => entry.status)).toEqual([200, 402]);
    });

    it('an open breaker: the stale page, nothing sent', async () => {
      const gw = await gateway();
      const first = await cachedThenDown(gw);
      // 3 attempts each (2 retries): the 5th failure in a row opens the breaker.
      for (let i = 0; i < 2; i++) expect((await gw.gql(LIST)).errors).toBeUndefined();
      const health = await fetch(new URL('/healthz', gw.url));
      expect(await health.json()).toMatchObject({ breaker: 'open' });
      sandbox.reset();
      const served = await gw.gql(LIST);
      expect(served.errors).toBeUndefined();
      expect(served.data).toEqual(first.data);
      expect(served.extensions!.stale).toHaveLength(1);
      expect(served.extensions).toMatchObject({ upstreamRequests: 0 });
      expect(spent()).toEqual({ requests: 0, credits: 0 });
    });

    it('CACHE_STALE_SECONDS=0: the failure is answered, UPSTREAM_UNAVAILABLE', async () => {
      const gw = await gateway({ cacheStaleSeconds: 0 });
      await cachedThenDown(gw);
      const failed = await gw.gql(LIST);
      expect(codeOf(failed)).toBe('UPSTREAM_UNAVAILABLE');
      expect(failed.extensions!.stale).toBeUndefined();
    });

    it('past the stale window: the failure is answered', async () => {
      const gw = await gateway({ cacheStaleSeconds: 1 });
      await cachedThenDown(gw, 2_200);
      expect(codeOf(await gw.gql(LIST))).toBe('UPSTREAM_UNAVAILABLE');
    });

    it('a fresh page is served from the cache as before, not as stale', async () => {
      const gw = await gateway({ cacheTtlSeconds: 60 });
      await gw.gql(LIST);
      sandbox.setFaults({ serverError: 1 });
      const cached = await gw.gql(LIST);
      expect(cached.errors).toBeUndefined();
      expect(cached.extensions!.stale).toBeUndefined();
      expect(cached.extensions).toMatchObject({ upstreamRequests: 0 });
    });
  });
}

describeStale('in memory', () => ({ cacheUrl: null }));

describe('with Redis', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(() => redis?.stop());
  beforeEach(() => redis.flush());

  describeStale('in Redis', () => ({ cacheUrl: redis.url }));

  it('another instance serves the page one fetched, stale, once it expired', async () => {
    // A TTL of 1 s (60 by default), so that the page expires within the test.
    const config = { cacheTtlSeconds: 1, cacheUrl: redis.url };
    const [a, b] = [
      await startGateway(sandbox, { config }),
      await startGateway(sandbox, { config }),
    ];
    try {
      sandbox.reset();
      const fetched = await a.gql(LIST);
      await sleep(1_200);
      sandbox.setFaults({ serverError: 1 });
      const served = await b.gql(LIST);
      expect(served.data).toEqual(fetched.data);
      expect(served.extensions!.stale).toHaveLength(1);
      expect(served.extensions!.credits).toMatchObject({ used: 0, saved: 5 });
    } finally {
      sandbox.setFaults({});
      await Promise.all([a.close(), b.close()]);
    }
  });
});

describe('what an operator sees', () => {
  it('the log line counts the stale pages, and gateway_stale_pages_total the endpoint', async () => {
    const log = captureLog('info');
    // A TTL of 1 s (60 by default), so that the page expires within the test.
    const gw = await startGateway(sandbox, {
      config: { cacheTtlSeconds: 1 },
      logger: log.logger,
    });
    try {
      sandbox.reset();
      await gw.gql(LIST);
      await sleep(1_200);
      sandbox.setFaults({ serverError: 1 });
      expect((await gw.gql(LIST)).extensions!.stale).toHaveLength(1);
      const lines = log.lines.filter((line) => line.msg === 'operation');
      expect(lines.map((line) => line['stale'])).toEqual([undefined, 1]);
      expect(lines[1]).toMatchObject({ outcome: 'ok', creditsUsed: 0, creditsSaved: 5 });

      const samples = parseMetrics(await (await fetch(new URL('/metrics', gw.url))).text());
      expect(valueOf(samples, 'gateway_stale_pages_total', { endpoint: 'fundingEvents' })).toBe(1);
      expect(
        valueOf(samples, 'gateway_credits_saved_total', {
          endpoint: 'fundingEvents',
          source: 'stale',
        }),
      ).toBe(5);
    } finally {
      sandbox.setFaults({});
      await gw.close();
    }
  });
});
