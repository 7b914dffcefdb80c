import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, startStack, type Gateway, type Stack } from '../helpers/start-stack.js';
import { startRedis, type RedisServer } from '../helpers/start-redis.js';
import { eventually, subscribeSse, subscribeWs, wsClient } from '../helpers/subscribe.js';
import { startGatewayProcess } from '../helpers/start-process.js';

// POLL_INTERVAL_SECONDS=1 (default 30), so that polls fit in a test; REDIS_URL names the suite's
// own Redis. Every other setting is the default. Faults of Redis and the takeover's bound are in
// subscriptions-redis-faults.test.ts.
const ROUNDS = `subscription Rounds($round: [String!]) {
  fundingEventAdded(round: $round) { uuid round company { name } }
}`;

describe('subscriptions across instances sharing one Redis', () => {
  let redis: RedisServer;
  let stack: Stack;
  let second: Gateway;

  beforeAll(async () => {
    redis = await startRedis();
    const config = { pollIntervalSeconds: 1, redisUrl: redis.url };
    stack = await startStack({ config });
    second = await startGateway(stack.sandbox, { config });
  });
  afterAll(async () => {
    await second?.close();
    await stack?.close();
    await redis?.stop();
  });

  /** The polls of the funding-events list since `from`. */
  const polls = (from: number) =>
    stack.sandbox
      .requestLog()
      .filter((e) => e.endpoint === '/v1/funding-events' && e.params['since'] && e.at >= from);

  it('polls once for both instances and serves every subscriber of both', async () => {
    const from = Date.now();
    const key = { 'x-api-key': stack.sandbox.keys.demo };
    const onFirst = [1, 2, 3].map(() =>
      subscribeSse(stack.url, ROUNDS, key, { round: ['series_a'] }),
    );
    const client = wsClient(second.url, { 'X-API-Key': stack.sandbox.keys.demo });
    const onSecond = [
      subscribeSse(second.url, ROUNDS, key, { round: ['series_a'] }),
      subscribeWs(client, ROUNDS, { round: ['series_a'] }),
    ];
    try {
      // Three polls' time: with one lease, one poll a second across both instances.
      await eventually(() => polls(from).length >= 2, 5_000, 'two polls');
      const windowStart = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      const inWindow = polls(windowStart).length;
      expect(inWindow).toBeGreaterThanOrEqual(2);
      expect(inWindow).toBeLessThanOrEqual(4);

      const added = stack.sandbox.addEvents({ kind: 'fundingEvent', round: 'series_a', count: 3 });
      const ids = new Set(added.map((event) => event.id));
      for (const subscription of [...onFirst, ...onSecond]) {
        const payloads = await subscription.next(3);
        expect(new Set(payloads.map((p) => p.data?.['fundingEventAdded'].uuid))).toEqual(ids);
      }
      // Paid once: the three records in one poll of one instance.
      expect(polls(from).reduce((sum, e) => sum + e.records, 0)).toBe(3);
    } finally {
      for (const subscription of [...onFirst, ...onSecond]) subscription.leave();
      await client.dispose();
    }
  });

  it('takes the poller over when its holder goes away, and loses no event', async () => {
    const key = { 'x-api-key': stack.sandbox.keys.demo };
    const third = await startGateway(stack.sandbox, {
      config: { pollIntervalSeconds: 1, redisUrl: redis.url },
    });
    const survivor = subscribeSse(second.url, ROUNDS, key, { round: ['series_b'] });
    const doomed = subscribeSse(third.url, ROUNDS, key, { round: ['series_b'] });
    try {
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      await third.close();
      doomed.leave();
      const added = stack.sandbox.addEvents({ kind: 'fundingEvent', round: 'series_b', count: 2 });
      const payloads = await survivor.next(2, 10_000);
      expect(payloads.map((p) => p.data?.['fundingEventAdded'].uuid).sort()).toEqual(
        added.map((event) => event.id).sort(),
      );
    } finally {
      survivor.leave();
      doomed.leave();
    }
  });

  it('takes the poller over when its holder is killed (SIGKILL: no release), and loses no event', async () => {
    const key = { 'x-api-key': stack.sandbox.keys.demo };
    // The holder in a process of its own, so that it can die without a word to Redis.
    const holder = await startGatewayProcess({
      UPSTREAM_URL: stack.sandbox.url,
      REDIS_URL: redis.url,
      POLL_INTERVAL_SECONDS: '1',
    });
    const from = Date.now();
    const onHolder = subscribeSse(holder.url, ROUNDS, key, { round: ['series_c'] });
    let survivor: ReturnType<typeof subscribeSse> | undefined;
    try {
      // Its first poll: it holds the lease; the in-process instance then only listens.
      await eventually(() => polls(from).length >= 1, 5_000, 'the holder polls');
      survivor = subscribeSse(second.url, ROUNDS, key, { round: ['series_c'] });
      // Events discovered after it subscribed are its own: give its request a moment to arrive.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const before = stack.sandbox.addEvents({ kind: 'fundingEvent', round: 'series_c', count: 1 });
      const [heard] = await survivor.next(1, 5_000);
      expect(heard?.data?.['fundingEventAdded'].uuid).toBe(before[0]!.id);

      holder.child.kill('SIGKILL');
      await holder.exited;
      const added = stack.sandbox.addEvents({ kind: 'fundingEvent', round: 'series_c', count: 2 });
      // The lease lapses (2 s) and the survivor's heartbeat takes it; then its instance polls.
      // (`next` counts every payload so far: the one before the kill, then these two, once each.)
      const payloads = (await survivor.next(3, 10_000)).slice(1);
      expect(payloads.map((p) => p.data?.['fundingEventAdded'].uuid).sort()).toEqual(
        added.map((event) => event.id).sort(),
      );
      // Each of the three records paid once across both instances.
      expect(polls(from).reduce((sum, e) => sum + e.records, 0)).toBe(3);
    } finally {
      onHolder.leave();
      survivor?.leave();
      if (holder.child.exitCode === null) holder.child.kill('SIGKILL');
    }
  }, 30_000);
});
