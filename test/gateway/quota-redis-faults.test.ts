import { createHmac } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config.js';
import { sharedPrefix } from '../../src/redis/shared-redis.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { eventually } from '../helpers/subscribe.js';
import { absentRedis, startRedis, type RedisServer } from '../helpers/start-redis.js';
import {
  NO_CACHE,
  startGateway,
  startStack,
  type Gateway,
  type Stack,
} from '../helpers/start-stack.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

// What the credit quotas guarantee while the shared Redis is slow, hung, killed, restarted empty,
// absent at boot or cut off from one instance (docs/operations.md names these tests). CREDIT_QUOTA
// set (unset by default) to 1000 credits a day, so that a bucket refills by about 0.01 credit a
// second and what a test reads stays put while it runs; REDIS_URL names the suite's own Redis,
// which the test hangs, kills, restarts or cuts off. Every other setting is the default.
const QUOTA = { credits: 1000, windowSeconds: 86_400 };
/** What a bucket refills during a test (a minute at most): a credit is plenty. */
const REFILL = 1;

interface Answer {
  status: number;
  body: { data?: any; errors?: { message: string; extensions?: any }[]; extensions?: any };
}

/** POSTs `query` fresh (every page fetched and charged) with `key`. */
async function post(gateway: Gateway, query: string, key: string): Promise<Answer> {
  const response = await fetch(gateway.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/graphql-response+json, application/json',
      'x-api-key': key,
      ...NO_CACHE,
    },
    body: JSON.stringify({ query }),
  });
  return { status: response.status, body: await response.json() };
}

/** 100 funding rounds: estimated, and charged, at 100 credits. */
const SPEND_100 = '{ fundingEvents(first: 100) { nodes { uuid } } }';
/** Estimated at 600 credits, and charged none: no round is that large. */
const ESTIMATE_600_CHARGE_0 = `{
  a: fundingEvents(first: 300, minAmountUsd: 1000000000000) { nodes { uuid } }
  b: fundingEvents(first: 300, minAmountUsd: 2000000000000) { nodes { uuid } }
}`;

/** Credits the sandbox charged `key`'s workspace since its last reset. */
function chargedTo(sandbox: Sandbox, workspace: string): number {
  return sandbox
    .requestLog()
    .filter((entry) => entry.workspace === workspace)
    .reduce((sum, entry) => sum + entry.records, 0);
}

/** The credits `key`'s bucket holds in Redis now (a full quota when it holds none). */
async function bucketIn(redis: RedisServer, sandbox: Sandbox, key: string): Promise<number> {
  const name = `${sharedPrefix(sandbox.url)}quota:${createHmac('sha256', defaultConfig.cursorSecret).update(key).digest('base64url')}`;
  const [credits] = await redis.client.hmget(name, 'c');
  return credits === null ? QUOTA.credits : Number(credits);
}

/** `gateway`'s link to Redis, as `/readyz` says it. */
async function redisState(gateway: Gateway): Promise<string> {
  const body = (await (await fetch(`${gateway.origin}/readyz`)).json()) as { redis?: string };
  return body.redis ?? 'none';
}

const upAgain = (gateway: Gateway) =>
  eventually(async () => (await redisState(gateway)) === 'up', 20_000, 'Redis up again');

/** A hang of Redis made by a test: it begins, and `end` lets Redis go on (and waits for it). */
interface Hang {
  name: string;
  begin(redis: RedisServer): void;
  end(redis: RedisServer): Promise<void>;
}

const HANGS: Hang[] = [
  {
    name: 'paused (SIGSTOP, SIGCONT after 3 s)',
    begin: (redis) => redis.pause(),
    async end(redis) {
      await sleep(3_000);
      redis.resume();
    },
  },
  (() => {
    let sleeping: Promise<unknown> = Promise.resolve();
    return {
      name: 'busy with one slow command (DEBUG SLEEP 3)',
      begin(redis) {
        sleeping = redis.client.call('DEBUG', 'SLEEP', '3');
      },
      end: () => sleeping.then(() => undefined),
    };
  })(),
];

describe('credit quotas while the shared Redis hangs', () => {
  let redis: RedisServer;
  let stack: Stack;
  let keys = 0;
  const newKey = () => {
    const key = `hang-${++keys}`;
    return { key, workspace: stack.sandbox.addKey(key, { credits: 1e9 }) };
  };

  beforeAll(async () => {
    // DEBUG SLEEP is refused unless enabled (from loopback only, here).
    redis = await startRedis(['--enable-debug-command', 'local']);
    // Connected now, so that a DEBUG SLEEP reaches Redis before the requests that follow it.
    await redis.client.ping();
    stack = await startStack({ config: { creditQuota: QUOTA, redisUrl: redis.url } });
  });
  afterAll(async () => {
    await stack?.close();
    await redis?.stop();
  });
  afterEach(() => redis.resume());

  it.each(HANGS)(
    'Redis $name: a reservation given up never lands later; no one is refused for it; the bucket holds what was charged',
    async (hang) => {
      const spender = newKey();
      const idle = newKey();
      expect((await post(stack, SPEND_100, spender.key)).status).toBe(200);
      expect((await post(stack, ESTIMATE_600_CHARGE_0, idle.key)).status).toBe(200);

      hang.begin(redis);
      // Sent together while the link is still up: both reservations wait in Redis's queue.
      const during = await Promise.all([
        post(stack, SPEND_100, spender.key),
        post(stack, ESTIMATE_600_CHARGE_0, idle.key),
      ]);
      for (let i = 0; i < 2; i++) {
        during.push(await post(stack, SPEND_100, spender.key));
        during.push(await post(stack, ESTIMATE_600_CHARGE_0, idle.key));
      }
      expect(await redisState(stack)).toBe('down');
      await hang.end(redis);
      await upAgain(stack);

      for (const answer of during) {
        expect(answer.status).toBe(200);
        expect(answer.body.errors).toBeUndefined();
      }
      const idleAfter = await post(stack, ESTIMATE_600_CHARGE_0, idle.key);
      expect(idleAfter.status).toBe(200);
      expect(idleAfter.body.errors).toBeUndefined();
      expect((await post(stack, SPEND_100, spender.key)).status).toBe(200);

      expect(chargedTo(stack.sandbox, idle.workspace)).toBe(0);
      const charged = chargedTo(stack.sandbox, spender.workspace);
      expect(charged).toBe(500);
      // The quota less what the sandbox charged, and nothing else: no phantom reservation, and
      // what was spent from memory during the hang taken from the bucket.
      const expected = QUOTA.credits - charged;
      await eventually(
        async () => (await bucketIn(redis, stack.sandbox, spender.key)) <= expected + REFILL,
        10_000,
        "the spender's bucket at what it was charged",
      );
      expect(await bucketIn(redis, stack.sandbox, spender.key)).toBeGreaterThanOrEqual(expected);
      expect(await bucketIn(redis, stack.sandbox, idle.key)).toBeGreaterThanOrEqual(
        QUOTA.credits - REFILL,
      );
    },
  );
});

describe('credit quotas when Redis applied a reservation and its answer was lost', () => {
  let redis: RedisServer;
  let proxy: TcpProxy;
  let stack: Stack;

  beforeAll(async () => {
    redis = await startRedis();
    proxy = await startTcpProxy(redis.port);
    stack = await startStack({ config: { creditQuota: QUOTA, redisUrl: proxy.url } });
  });
  afterAll(async () => {
    await stack?.close();
    await proxy?.close();
    await redis?.stop();
  });

  it('gives the reservation back once Redis answers again: settled once, by its mark', async () => {
    const workspace = stack.sandbox.addKey('lost-answer', { credits: 1e9 });
    expect((await post(stack, ESTIMATE_600_CHARGE_0, 'lost-answer')).status).toBe(200);

    proxy.holdAnswers();
    const during = await post(stack, ESTIMATE_600_CHARGE_0, 'lost-answer');
    expect(during.status).toBe(200);
    expect(await redisState(stack)).toBe('down');
    // Redis took the 600 credits; the gateway never heard, and served the request from memory.
    expect(await bucketIn(redis, stack.sandbox, 'lost-answer')).toBeLessThanOrEqual(400 + REFILL);

    proxy.release();
    await upAgain(stack);
    await eventually(
      async () => (await bucketIn(redis, stack.sandbox, 'lost-answer')) >= 1000 - REFILL,
      10_000,
      'the 600 credits given back',
    );
    const after = await post(stack, ESTIMATE_600_CHARGE_0, 'lost-answer');
    expect(after.status).toBe(200);
    expect(after.body.errors).toBeUndefined();
    expect(chargedTo(stack.sandbox, workspace)).toBe(0);
    // Every hold settled: no mark is left in Redis.
    expect(await redis.client.keys('*:h:*')).toEqual([]);
  });
});

describe('credit quotas across a Redis that lost its data', () => {
  let redis: RedisServer;
  let stack: Stack;
  let keys = 0;
  const newKey = () => {
    const key = `lost-${++keys}`;
    return { key, workspace: stack.sandbox.addKey(key, { credits: 1e9 }) };
  };
  /** Spends 100 credits a request until one is refused (at most `most` requests): the 200s. */
  const spendUntilRefused = async (gateway: Gateway, key: string, most = 30) => {
    for (let served = 0; served < most; served++) {
      const answer = await post(gateway, SPEND_100, key);
      if (answer.status === 429) return served;
      expect(answer.status).toBe(200);
    }
    return most;
  };

  afterEach(async () => {
    await stack?.close();
    await redis?.stop();
  });

  it('killed (SIGKILL) and restarted empty: buckets are rebuilt from what the instance knew, and what it spent meanwhile is taken from them', async () => {
    redis = await startRedis();
    stack = await startStack({ config: { creditQuota: QUOTA, redisUrl: redis.url } });
    const spender = newKey();
    const quiet = newKey();
    const idle = newKey();
    for (let i = 0; i < 6; i++) {
      expect((await post(stack, SPEND_100, spender.key)).status).toBe(200);
      expect((await post(stack, SPEND_100, quiet.key)).status).toBe(200);
    }

    await redis.kill();
    // Down: from the 400 credits last known in Redis, not from a full bucket.
    expect(await spendUntilRefused(stack, spender.key)).toBe(4);
    await redis.restart();
    await upAgain(stack);

    // What the spender spent while Redis was down is taken from its rebuilt bucket: it has none.
    expect(await spendUntilRefused(stack, spender.key)).toBe(0);
    expect(chargedTo(stack.sandbox, spender.workspace)).toBe(1000);
    expect(await bucketIn(redis, stack.sandbox, spender.key)).toBeLessThanOrEqual(REFILL);
    // One that spent nothing meanwhile has what it had left (400), not a full bucket.
    expect(await spendUntilRefused(stack, quiet.key)).toBe(4);
    expect(chargedTo(stack.sandbox, quiet.workspace)).toBe(1000);
    // One that never spent has a full bucket.
    expect(await spendUntilRefused(stack, idle.key)).toBe(10);
  });

  it('absent at boot, then started: what was spent before it came is taken from its buckets', async () => {
    redis = await absentRedis();
    stack = await startStack({ config: { creditQuota: QUOTA, redisUrl: redis.url } });
    expect(await redisState(stack)).toBe('down');
    const spender = newKey();
    expect(await spendUntilRefused(stack, spender.key)).toBe(10);

    await redis.restart();
    await upAgain(stack);
    await eventually(
      async () => (await bucketIn(redis, stack.sandbox, spender.key)) <= REFILL,
      10_000,
      'what was spent carried to Redis',
    );
    expect(await spendUntilRefused(stack, spender.key)).toBe(0);
    expect(chargedTo(stack.sandbox, spender.workspace)).toBe(1000);
  });
});

describe('credit quotas across a partition between one instance and Redis', () => {
  let redis: RedisServer;
  let proxy: TcpProxy;
  let stack: Stack;
  let cutOff: Gateway;

  beforeAll(async () => {
    redis = await startRedis();
    proxy = await startTcpProxy(redis.port);
    stack = await startStack({ config: { creditQuota: QUOTA, redisUrl: redis.url } });
    cutOff = await startGateway(stack.sandbox, {
      config: { creditQuota: QUOTA, redisUrl: proxy.url },
    });
  });
  afterAll(async () => {
    await cutOff?.close();
    await stack?.close();
    await proxy?.close();
    await redis?.stop();
  });

  it('the cut-off instance spends at most what it last knew the bucket held; the bucket is charged all of it once the cut heals', async () => {
    const workspace = stack.sandbox.addKey('partitioned', { credits: 1e9 });
    const spend = async (gateway: Gateway) =>
      (await post(gateway, SPEND_100, 'partitioned')).status;
    expect([await spend(cutOff), await spend(cutOff)]).toEqual([200, 200]);
    expect([await spend(stack), await spend(stack)]).toEqual([200, 200]);
    // Redis holds 600; the instance to be cut off last heard 800.

    proxy.cut();
    const shared: number[] = [];
    for (let i = 0; i < 7; i++) shared.push(await spend(stack));
    expect(shared).toEqual([200, 200, 200, 200, 200, 200, 429]);
    const alone: number[] = [];
    for (let i = 0; i < 9; i++) alone.push(await spend(cutOff));
    expect(await redisState(cutOff)).toBe('down');
    expect(alone).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 429]);
    // The slack: 800 credits, what the cut-off instance last knew.
    expect(chargedTo(stack.sandbox, workspace)).toBe(1000 + 800);

    proxy.restore();
    await upAgain(cutOff);
    await eventually(
      async () => (await bucketIn(redis, stack.sandbox, 'partitioned')) <= -800 + REFILL,
      10_000,
      'what the cut-off instance spent carried to Redis',
    );
    // Paid back: the bucket is below 0 until it refills.
    expect(await spend(stack)).toBe(429);
    expect(await spend(cutOff)).toBe(429);
    expect(chargedTo(stack.sandbox, workspace)).toBe(1800);
  });
});
