import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, startStack, type Gateway, type Stack } from '../helpers/start-stack.js';
import { startRedis, type RedisServer } from '../helpers/start-redis.js';
import { startPartitionProxy, type PartitionProxy } from '../helpers/partition-proxy.js';
import {
  eventually,
  subscribeSse,
  subscribeWs,
  wsClient,
  type Subscribed,
} from '../helpers/subscribe.js';
import { killGatewayProcesses, startGatewayProcess } from '../helpers/start-process.js';

// Two instances share one Redis: `first` reaches it directly, `second` through a TCP proxy the
// test cuts (a partition of that instance alone). POLL_INTERVAL_SECONDS=2 (default 30), so that
// a fault spans several polls and the test takes seconds, and a partition can fall between two
// polls; the takeover test sets 10 (see there).
// Redis runs with the DEBUG command enabled (for a slow command). Every other setting is the
// default.
const ROUNDS = `subscription Rounds($round: [String!], $since: DateTime) {
  fundingEventAdded(round: $round, since: $since) { uuid round }
}`;

describe('subscriptions across instances through Redis faults', () => {
  let redis: RedisServer;
  let proxy: PartitionProxy;
  let stack: Stack;
  let second: Gateway;

  beforeAll(async () => {
    redis = await startRedis(['--enable-debug-command', 'yes']);
    proxy = await startPartitionProxy(redis.port);
    stack = await startStack({ config: { pollIntervalSeconds: 2, redisUrl: redis.url } });
    second = await startGateway(stack.sandbox, {
      config: { pollIntervalSeconds: 2, redisUrl: proxy.url },
    });
  });
  afterAll(async () => {
    killGatewayProcesses();
    await second?.close();
    await stack?.close();
    await proxy?.close();
    await redis?.stop();
  });

  const key = () => ({ 'x-api-key': stack.sandbox.keys.demo });

  /** The polls of the funding-events list filtered on `round` since `from` (epoch ms). */
  const polls = (round: string, from = 0) =>
    stack.sandbox
      .requestLog()
      .filter(
        (e) =>
          e.endpoint === '/v1/funding-events' &&
          e.params['since'] &&
          e.params['round']?.includes(round) &&
          e.at >= from,
      );

  /** Credits the sandbox charged for the polls of `round` since `from`. */
  const charged = (round: string, from = 0) =>
    polls(round, from).reduce((sum, e) => sum + e.records, 0);

  /** Adds an event of `round` every `everyMs` until stopped; the ids added, in order. */
  function addEvery(round: string, everyMs: number) {
    const ids: string[] = [];
    const add = () => {
      const [event] = stack.sandbox.addEvents({ kind: 'fundingEvent', round });
      ids.push(event!.id);
    };
    add();
    const timer = setInterval(add, everyMs);
    return {
      ids,
      stop: () => clearInterval(timer),
    };
  }

  /** The uuids each subscription received, in order. */
  const received = (subscription: Subscribed) =>
    subscription.payloads.map((p) => p.data?.['fundingEventAdded']?.uuid as string);

  /**
   * Waits for every subscription to have `ids.length` payloads (then a moment more, for any
   * duplicate), and checks that each got every id exactly once.
   */
  async function expectEachOnce(subscriptions: Record<string, Subscribed>, ids: string[]) {
    await eventually(
      () => Object.values(subscriptions).every((s) => s.payloads.length >= ids.length),
      20_000,
      `${ids.length} payloads on every subscription`,
    ).catch(() => undefined);
    await sleep(1_500);
    const sorted = [...ids].sort();
    for (const [name, subscription] of Object.entries(subscriptions)) {
      expect({ name, ids: received(subscription).sort() }).toEqual({ name, ids: sorted });
    }
  }

  /**
   * An SSE and a WebSocket subscription on each instance, the `leader`'s first: it holds the
   * lease and polls, the other hears it.
   */
  async function subscribeBoth(round: string, leader: 'first' | 'second' = 'second') {
    const from = Date.now();
    const instances = { first: stack, second };
    const order =
      leader === 'second' ? (['second', 'first'] as const) : (['first', 'second'] as const);
    const ws: ReturnType<typeof wsClient>[] = [];
    const subscriptions: Record<string, Subscribed> = {};
    for (const name of order) {
      const { url } = instances[name];
      const client = wsClient(url, { 'X-API-Key': key()['x-api-key'] });
      ws.push(client);
      subscriptions[`${name}, SSE`] = subscribeSse(url, ROUNDS, key(), { round: [round] });
      subscriptions[`${name}, WebSocket`] = subscribeWs(client, ROUNDS, { round: [round] });
      // Its first poll: the leader holds the lease; the other then hears it.
      if (name === leader) {
        await eventually(() => polls(round, from).length >= 1, 5_000, 'the first poll');
      }
    }
    // Events discovered once they started are theirs: give their requests a moment to arrive.
    await sleep(1_500);
    return {
      subscriptions,
      async leave() {
        for (const subscription of Object.values(subscriptions)) subscription.leave();
        await Promise.all(ws.map((client) => client.dispose()));
      },
    };
  }

  const faults: { name: string; round: string; fault: () => Promise<void> }[] = [
    {
      name: 'a partition of the lease holder for 0.6 s as its poll falls due (reset)',
      round: 'partition_short',
      async fault() {
        // Its poll in the cut finds an event and cannot tell Redis; it keeps its lease.
        const last = polls('partition_short').at(-1)!.at;
        await sleep(Math.max(0, last + 2_000 - 300 - Date.now()));
        proxy.cut('reset');
        await sleep(600);
        proxy.restore();
      },
    },
    {
      name: 'a partition of one instance, silent (nothing crosses for 6 s, then all of it)',
      round: 'partition_silent',
      async fault() {
        proxy.cut('silent');
        await sleep(6_000);
        proxy.restore();
      },
    },
    {
      name: 'a partition of one instance, its connections reset and refused for 6 s',
      round: 'partition_reset',
      async fault() {
        proxy.cut('reset');
        await sleep(6_000);
        proxy.restore();
      },
    },
    {
      name: 'Redis killed, then restarted empty 4 s later',
      round: 'restart',
      async fault() {
        await redis.kill();
        await sleep(4_000);
        await redis.restart();
      },
    },
    {
      name: 'Redis hung for 5 s (SIGSTOP, then SIGCONT)',
      round: 'hang',
      async fault() {
        redis.pause();
        await sleep(5_000);
        redis.resume();
      },
    },
    {
      name: 'Redis slow: one command of 3 s (DEBUG SLEEP)',
      round: 'slow',
      async fault() {
        const client = new Redis(redis.url, { maxRetriesPerRequest: 0 });
        client.on('error', () => undefined);
        try {
          await client.call('DEBUG', 'SLEEP', '3');
        } finally {
          client.disconnect();
        }
      },
    },
  ];

  for (const { name, round, fault } of faults) {
    it(`delivers every event once to every subscriber through ${name}`, async () => {
      const from = Date.now();
      const both = await subscribeBoth(round);
      try {
        const events = addEvery(round, 400);
        await sleep(1_000);
        await fault();
        await sleep(5_000);
        events.stop();
        await expectEachOnce(both.subscriptions, events.ids);
        // Each event paid at least once, and at most once per instance (both may poll on their
        // own while Redis is away or cut off).
        const credits = charged(round, from);
        expect(credits).toBeGreaterThanOrEqual(events.ids.length);
        expect(credits).toBeLessThanOrEqual(2 * events.ids.length);
      } finally {
        await both.leave();
      }
    }, 60_000);
  }

  it('delivers every event once when a subscriber of the holder catches up on less than what is new', async () => {
    const round = 'catch_up';
    const from = Date.now();
    const both = await subscribeBoth(round, 'first');
    try {
      // Right after a poll of the holder: three events, and a subscriber from a past `since` whose
      // budget takes one record. Its catch-up fetches the newest only, before the next poll.
      const polled = polls(round, from).length;
      await eventually(() => polls(round, from).length > polled, 5_000, 'a poll');
      const added = stack.sandbox.addEvents({ kind: 'fundingEvent', round, count: 3 });
      const late = subscribeSse(
        stack.url,
        ROUNDS,
        { ...key(), 'x-credit-budget': '1' },
        { round: [round], since: new Date(from).toISOString() },
      );
      try {
        const [first] = await late.next(1);
        expect(first?.data?.['fundingEventAdded'].uuid).toBe(added.at(-1)!.id);
        await expectEachOnce(
          both.subscriptions,
          added.map((event) => event.id),
        );
      } finally {
        late.leave();
      }
    } finally {
      await both.leave();
    }
  }, 60_000);

  it('delivers every event once through a trimmed stream: the reader that lost entries polls from its watermark', async () => {
    const round = 'trimmed';
    const from = Date.now();
    // `first` polls; `second` hears it through its reader's connection, which alone is cut: its
    // link (and lease heartbeat) stays up, so it does not poll on its own meanwhile.
    const both = await subscribeBoth(round, 'first');
    const client = new Redis(redis.url, { maxRetriesPerRequest: 0 });
    client.on('error', () => undefined);
    try {
      const events = addEvery(round, 400);
      await sleep(1_000);
      const clients = (await client.call('CLIENT', 'LIST')) as string;
      const proxied = new Set(proxy.serverPorts());
      const readers = clients
        .split('\n')
        .filter((line) => / cmd=xread /.test(line))
        .map((line) => Number(/ addr=[^ ]*:(\d+) /.exec(line)?.[1]))
        .filter((port) => proxied.has(port));
      expect(readers).toHaveLength(1);
      proxy.cut('silent', readers);
      await sleep(3_000);
      // What `first` published meanwhile is gone before `second` read it.
      const streams = (await client.keys('*live:events:*')) as string[];
      for (const stream of streams) await client.xtrim(stream, 'MAXLEN', 0);
      await sleep(3_000);
      proxy.restore();
      await sleep(4_000);
      events.stop();
      await expectEachOnce(both.subscriptions, events.ids);
      const credits = charged(round, from);
      expect(credits).toBeGreaterThanOrEqual(events.ids.length);
      expect(credits).toBeLessThanOrEqual(2 * events.ids.length);
    } finally {
      client.disconnect();
      await both.leave();
    }
  }, 60_000);

  it('replaces a dead holder (SIGKILL) within a poll interval plus a few seconds, from its watermark', async () => {
    // POLL_INTERVAL_SECONDS=10 here: long against the lease (2 s) and its heartbeat (0.5 s), so
    // that "an interval plus a few seconds" and the old "3 intervals" differ by 20 s, short enough
    // for a test.
    const interval = 10_000;
    const round = 'takeover';
    const survivor = await startGateway(stack.sandbox, {
      config: { pollIntervalSeconds: 10, redisUrl: redis.url },
    });
    const holder = await startGatewayProcess({
      UPSTREAM_URL: stack.sandbox.url,
      REDIS_URL: redis.url,
      POLL_INTERVAL_SECONDS: '10',
    });
    const from = Date.now();
    const onHolder = subscribeSse(holder.url, ROUNDS, key(), { round: [round] });
    const ws = wsClient(survivor.url, { 'X-API-Key': key()['x-api-key'] });
    let subscriptions: Record<string, Subscribed> = {};
    try {
      await eventually(() => polls(round, from).length >= 1, 10_000, 'the holder polls');
      subscriptions = {
        'survivor, SSE': subscribeSse(survivor.url, ROUNDS, key(), { round: [round] }),
        'survivor, WebSocket': subscribeWs(ws, ROUNDS, { round: [round] }),
      };
      await sleep(1_500);
      const [before] = stack.sandbox.addEvents({ kind: 'fundingEvent', round });
      for (const subscription of [onHolder, ...Object.values(subscriptions)]) {
        await subscription.next(1, interval + 5_000);
      }
      // Killed a second before its next poll was due: the longest wait for a successor.
      const last = polls(round, from).at(-1)!.at;
      await sleep(Math.max(0, last + interval - 1_000 - Date.now()));
      holder.child.kill('SIGKILL');
      await holder.exited;
      const killedAt = Date.now();
      const added = stack.sandbox.addEvents({ kind: 'fundingEvent', round, count: 2 });

      await eventually(
        () => polls(round, killedAt).length >= 1,
        3 * interval + 15_000,
        'a poll after the kill',
      ).catch(() => undefined);
      const next = polls(round, killedAt)[0]?.at ?? Number.POSITIVE_INFINITY;
      // Bounds of behaviour, with slack for a busy machine: the survivor polls once the lease
      // (2 s) lapsed and its heartbeat (0.5 s) took it, and not before the poll was due.
      expect(next - last).toBeLessThanOrEqual(interval + 5_000);
      expect(next - last).toBeGreaterThanOrEqual(interval - 1_500);

      await expectEachOnce(subscriptions, [before!.id, ...added.map((event) => event.id)]);
      // Each of the three events paid once across both instances.
      expect(charged(round, from)).toBe(3);
    } finally {
      onHolder.leave();
      for (const subscription of Object.values(subscriptions)) subscription.leave();
      await ws.dispose();
      if (holder.child.exitCode === null) holder.child.kill('SIGKILL');
      await survivor.close();
    }
  }, 120_000);
});
