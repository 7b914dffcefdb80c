import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import {
  SMALL_SIZES,
  startGateway,
  type Gateway,
  type GatewayOptions,
  spentOn,
} from '../helpers/start-stack.js';
import { captureLog } from '../helpers/capture-log.js';
import { scrape, valueOf } from '../helpers/prometheus.js';
import { startRedis, type RedisServer } from '../helpers/start-redis.js';

/** Two keys of the demo workspace, and one of another workspace. */
const SAME_WORKSPACE_KEY = 'demo-second-key';
const OTHER_WORKSPACE_KEY = 'other-workspace-key';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, quiet: true, sizes: SMALL_SIZES });
  sandbox.addKey(SAME_WORKSPACE_KEY, { sameWorkspaceAs: sandbox.keys.demo });
  sandbox.addKey(OTHER_WORKSPACE_KEY);
});
afterAll(() => sandbox?.close());

/** Upstream requests and credits the sandbox saw since the last reset. */
const spent = () => spentOn(sandbox);

const LIST = `{ fundingEvents(first: 20) { nodes { uuid round amountUsdCents company { name } } } }`;
const WALK = `{
  fundingEvents(first: 4) { nodes { uuid company { name execMoves(first: 2) { nodes { role } } } } }
}`;

/** The credits extension of a response. */
function credits(response: { extensions?: Record<string, any> }) {
  return response.extensions!.credits as { used: number; saved: number; remaining: number | null };
}

/**
 * The cache's behaviour, the same whichever store holds the pages. `store()` gives the settings
 * that choose it; each test gets a fresh gateway over an empty store.
 */
function describeCache(name: string, store: () => Partial<GatewayOptions['config']>) {
  describe(`the page cache (${name})`, () => {
    const gateways: Gateway[] = [];
    async function gateway(config: GatewayOptions['config'] = {}, options: GatewayOptions = {}) {
      const started = await startGateway(sandbox, {
        ...options,
        config: { cacheTtlSeconds: 60, ...store(), ...config },
      });
      gateways.push(started);
      return started;
    }
    beforeEach(() => sandbox.reset());
    afterEach(async () => {
      await Promise.all(gateways.splice(0).map((started) => started.close()));
    });

    it('serves a repeat from the cache: no request, no credit, the records saved', async () => {
      const gw = await gateway();
      const first = await gw.gql(LIST);
      expect(first.errors).toBeUndefined();
      expect(credits(first)).toMatchObject({ used: 20, saved: 0 });
      sandbox.reset();

      const again = await gw.gql(LIST);
      expect(again.data).toEqual(first.data);
      expect(again.extensions!.upstreamRequests).toBe(0);
      expect(credits(again)).toMatchObject({ used: 0, saved: 20 });
      expect(spent()).toEqual({ requests: 0, credits: 0 });
    });

    it('credits for 10 identical operations equal those of one', async () => {
      const gw = await gateway();
      for (let i = 0; i < 10; i++) expect((await gw.gql(LIST)).errors).toBeUndefined();
      expect(spent()).toEqual({ requests: 1, credits: 20 });
    });

    it('never serves a page to another key, even of the same workspace', async () => {
      const gw = await gateway();
      await gw.gql(LIST);
      sandbox.reset();
      const sameWorkspace = await gw.gql(LIST, {}, { key: SAME_WORKSPACE_KEY });
      expect(credits(sameWorkspace)).toMatchObject({ used: 20, saved: 0 });
      const otherWorkspace = await gw.gql(LIST, {}, { key: OTHER_WORKSPACE_KEY });
      expect(credits(otherWorkspace)).toMatchObject({ used: 20, saved: 0 });
      expect(spent()).toEqual({ requests: 2, credits: 40 });
      expect(new Set(sandbox.requestLog().map((entry) => entry.workspace)).size).toBe(2);
    });

    it('fetches again after the TTL', async () => {
      const gw = await gateway({ cacheTtlSeconds: 1 });
      await gw.gql(LIST);
      expect((await gw.gql(LIST)).extensions!.upstreamRequests).toBe(0);
      await sleep(1_100);
      sandbox.reset();
      const expired = await gw.gql(LIST);
      expect(credits(expired)).toMatchObject({ used: 20, saved: 0 });
      expect(spent()).toEqual({ requests: 1, credits: 20 });
    });

    it('Cache-Control: no-cache fetches fresh, charges, and refreshes the cache', async () => {
      const gw = await gateway();
      await gw.gql(LIST);
      sandbox.reset(); // credits back to the start: a fresh page tells a different `remaining`
      const fresh = await gw.gql(LIST, {}, { headers: { 'cache-control': 'no-cache' } });
      expect(credits(fresh)).toMatchObject({ used: 20, saved: 0 });
      expect(spent()).toEqual({ requests: 1, credits: 20 });

      const cached = await gw.gql(LIST);
      expect(cached.extensions!.upstreamRequests).toBe(0);
      // The page refreshed by the no-cache request, not the first one.
      expect(credits(cached).remaining).toBe(credits(fresh).remaining);
      expect(spent()).toEqual({ requests: 1, credits: 20 });
    });

    it('joins 20 concurrent identical operations to one upstream request', async () => {
      const gw = await gateway();
      sandbox.setLatency({ fixedMs: 100 });
      const responses = await Promise.all(Array.from({ length: 20 }, () => gw.gql(LIST)));
      for (const response of responses) expect(response.errors).toBeUndefined();
      expect(spent()).toEqual({ requests: 1, credits: 20 });
      const used = responses.reduce((sum, response) => sum + credits(response).used, 0);
      const saved = responses.reduce((sum, response) => sum + credits(response).saved, 0);
      expect(used).toBe(20);
      expect(saved).toBe(19 * 20);
      const sent = responses.reduce((sum, r) => sum + (r.extensions!.upstreamRequests ?? 0), 0);
      expect(sent).toBe(1);
    });

    it('never caches an upstream error', async () => {
      const gw = await gateway();
      sandbox.setFaults({ serverError: 1 });
      const failed = await gw.gql(LIST);
      expect(failed.errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
      sandbox.setFaults({});
      sandbox.reset();
      const served = await gw.gql(LIST);
      expect(served.errors).toBeUndefined();
      expect(credits(served)).toMatchObject({ used: 20, saved: 0 });
      expect(spent()).toEqual({ requests: 1, credits: 20 });
    });

    it('serves a nested walk again with no request at all', async () => {
      const gw = await gateway();
      const first = await gw.gql(WALK);
      expect(first.errors).toBeUndefined();
      const firstCost = spent();
      expect(firstCost.requests).toBeGreaterThan(1);
      sandbox.reset();
      const again = await gw.gql(WALK);
      expect(again.data).toEqual(first.data);
      expect(spent()).toEqual({ requests: 0, credits: 0 });
      expect(credits(again)).toMatchObject({ used: 0, saved: firstCost.credits });
    });

    it('primes lookups from a cached page: a record in it costs nothing', async () => {
      const gw = await gateway();
      const list = await gw.gql(`{ companies(first: 5) { nodes { id name } } }`);
      const { id, name } = list.data.companies.nodes[3];
      sandbox.reset();
      const both = await gw.gql(
        `query ($id: ID!) { companies(first: 5) { nodes { id } } company(id: $id) { name } }`,
        { id },
      );
      expect(both.errors).toBeUndefined();
      expect(both.data.company.name).toBe(name);
      expect(spent()).toEqual({ requests: 0, credits: 0 });
    });
  });
}

describeCache('in memory', () => ({ cacheUrl: null }));

let redis: RedisServer;
describe('with Redis', () => {
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(() => redis?.stop());
  beforeEach(() => redis.flush());

  describeCache('in Redis', () => ({ cacheUrl: redis.url }));

  describe('two gateway instances on one Redis', () => {
    const gateways: Gateway[] = [];
    async function instance() {
      const started = await startGateway(sandbox, {
        config: { cacheTtlSeconds: 60, cacheUrl: redis.url },
      });
      gateways.push(started);
      return started;
    }
    beforeEach(() => sandbox.reset());
    afterEach(async () => {
      await Promise.all(gateways.splice(0).map((started) => started.close()));
    });

    it('share a page: what one fetched, the other serves', async () => {
      const [a, b] = [await instance(), await instance()];
      const fetched = await a.gql(LIST);
      expect(credits(fetched)).toMatchObject({ used: 20, saved: 0 });
      const shared = await b.gql(LIST);
      expect(shared.data).toEqual(fetched.data);
      expect(credits(shared)).toMatchObject({ used: 0, saved: 20 });
      expect(spent()).toEqual({ requests: 1, credits: 20 });
    });

    it('name pages by an HMAC under the upstream: no hash of the key, other upstreams apart', async () => {
      const a = await instance();
      await a.gql(LIST);
      const client = new Redis(redis.url);
      try {
        const names = await client.keys('*');
        expect(names.length).toBeGreaterThan(0);
        const keyHashes = ['hex', 'base64url'].map((encoding) =>
          createHash('sha256')
            .update(sandbox.keys.demo)
            .digest(encoding as 'hex' | 'base64url'),
        );
        for (const name of names) {
          // Pages, the whole answers of repeat views (src/answers/) and the key's epoch (what
          // a 401 drops), named alike.
          expect(name).toMatch(/^bsg:v2:[\w-]{12}:(?:page|answer|epoch):[\w-]{43}$/);
          for (const hash of keyHashes) expect(name).not.toContain(hash);
        }
      } finally {
        client.disconnect();
      }
      // The same service under another base URL is another upstream: nothing is shared.
      const other = await startGateway(sandbox, {
        config: { cacheTtlSeconds: 60, cacheUrl: redis.url },
        upstream: { baseUrl: sandbox.url.replace('127.0.0.1', 'localhost') },
      });
      gateways.push(other);
      sandbox.reset();
      expect(credits(await other.gql(LIST))).toMatchObject({ used: 20, saved: 0 });
    });

    it('share the fetch of a page asked of both at once', async () => {
      const [a, b] = [await instance(), await instance()];
      sandbox.setLatency({ fixedMs: 150 });
      const responses = await Promise.all([
        ...Array.from({ length: 5 }, () => a.gql(LIST)),
        ...Array.from({ length: 5 }, () => b.gql(LIST)),
      ]);
      for (const response of responses) expect(response.errors).toBeUndefined();
      expect(spent()).toEqual({ requests: 1, credits: 20 });
      expect(responses.reduce((sum, r) => sum + credits(r).saved, 0)).toBe(9 * 20);
    });
  });
});

describe('with Redis unreachable from the start (REDIS_URL at a closed port)', () => {
  it('caches on its own: a repeat costs nothing, the run fails nothing, the log and gateway_redis_up say so', async () => {
    const down = await startRedis();
    await down.stop();
    const log = captureLog('info');
    const gw = await startGateway(sandbox, {
      config: { cacheTtlSeconds: 60, cacheUrl: down.url },
      logger: log.logger,
    });
    try {
      sandbox.reset();
      const first = await gw.gql(LIST);
      expect(first.errors).toBeUndefined();
      expect(credits(first)).toMatchObject({ used: 20, saved: 0 });
      for (let i = 0; i < 2; i++) {
        const again = await gw.gql(LIST);
        expect(again.data).toEqual(first.data);
        expect(credits(again)).toMatchObject({ used: 0, saved: 20 });
      }
      // Another request (a trailing space: not the kept answer) over the same page.
      const samePage = await gw.gql(`${LIST} `);
      expect(samePage.data).toEqual(first.data);
      expect(samePage.extensions!.upstreamRequests).toBe(0);
      expect(spent()).toEqual({ requests: 1, credits: 20 });

      expect(valueOf(await scrape(`${gw.origin}/metrics`), 'gateway_redis_up')).toBe(0);
      const warnings = log.lines.filter((line) => line.msg.startsWith('shared Redis'));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]!.msg).toMatch(/not asked until it answers again/);
    } finally {
      await gw.close();
    }
  });
});

describe('the memory bound', () => {
  it('evicts the least recently used page when the bytes are full', async () => {
    // Room for about one 20-event page (some 20 KB of JSON), not two.
    const gw = await startGateway(sandbox, {
      config: { cacheTtlSeconds: 60 },
      upstream: { cache: { ttlMs: 60_000, maxBytes: 30_000 } },
    });
    try {
      sandbox.reset();
      const seed = `{ fundingEvents(first: 20, round: ["seed"]) { nodes { uuid } } }`;
      const seriesA = `{ fundingEvents(first: 20, round: ["series_a"]) { nodes { uuid } } }`;
      await gw.gql(seed);
      expect((await gw.gql(seed)).extensions!.upstreamRequests).toBe(0);
      await gw.gql(seriesA);
      expect((await gw.gql(seriesA)).extensions!.upstreamRequests).toBe(0);
      // The seed page went to make room for series A's. (A trailing space: not the exact
      // request again, whose small whole answer is still kept, but the same page.)
      expect((await gw.gql(`${seed} `)).extensions!.upstreamRequests).toBe(1);
      expect(spent().requests).toBe(3);
    } finally {
      await gw.close();
    }
  });
});
