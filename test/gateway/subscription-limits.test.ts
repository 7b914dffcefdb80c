import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig, type Config } from '../../src/config.js';
import type { RequestLogEntry } from '../../src/sandbox/index.js';
import { parseMetrics, valueOf } from '../helpers/prometheus.js';
import { NO_CACHE, startStack, type Stack } from '../helpers/start-stack.js';
import { eventually, subscribeSse, type Subscribed } from '../helpers/subscribe.js';

// POLL_INTERVAL_SECONDS=1 (default 30): every poller wants a poll a second, so that a few seconds
// hold many polls and the per-key bounds show. MAX_POLLERS_PER_KEY and POLL_REQUESTS_PER_SECOND
// are their defaults, except where a test says otherwise.
const POLL: Partial<Config> = { pollIntervalSeconds: 1 };

const BOUND = defaultConfig.maxPollersPerKey;
const RATE = defaultConfig.pollRequestsPerSecond;

/** One poller per amount: each value of `min` is a distinct filter. */
const ABOVE = `subscription Above($min: Float) { fundingEventAdded(minAmountUsd: $min) { uuid } }`;
const ROUNDS = `subscription Rounds($round: [String!]) { fundingEventAdded(round: $round) { uuid } }`;

let stack: Stack;
const open: Subscribed[] = [];

/** Keys are made per test (the sandbox keeps added keys across resets): one workspace each. */
let keys = 0;
function newKey(spec: { ratePerSecond?: number } = {}): { key: string; workspace: string } {
  const key = `limits-key-${++keys}`;
  return { key, workspace: stack.sandbox.addKey(key, spec) };
}

function sse(key: string, query: string, variables: Record<string, unknown>): Subscribed {
  const subscription = subscribeSse(stack.url, query, { 'x-api-key': key }, variables);
  open.push(subscription);
  return subscription;
}

async function metric(name: string): Promise<number> {
  const text = await (await fetch(`${stack.origin}/metrics`)).text();
  return valueOf(parseMetrics(text), name);
}

const pollers = () => metric('gateway_subscription_pollers');
const subscribers = () => metric('gateway_subscription_subscribers');

/** The first payload's error code, once the subscription was refused (it then completes). */
const codeOf = (subscription: Subscribed): unknown =>
  subscription.payloads[0]?.errors?.[0]?.extensions?.['code'];

const refused = (subscriptions: Subscribed[]) =>
  subscriptions.filter((subscription) => codeOf(subscription) === 'TOO_MANY_SUBSCRIPTIONS');

/** The polls (requests with `since`) of the funding-events list that `match` picks. */
function polls(match: (entry: RequestLogEntry) => boolean): RequestLogEntry[] {
  return stack.sandbox
    .requestLog()
    .filter(
      (entry) => entry.endpoint === '/v1/funding-events' && entry.params['since'] && match(entry),
    );
}

afterEach(async () => {
  for (const subscription of open.splice(0)) subscription.leave();
  await eventually(async () => (await pollers()) === 0, 10_000, 'no pollers');
  stack.sandbox.reset();
});

describe('pollers per upstream key (MAX_POLLERS_PER_KEY)', () => {
  beforeAll(async () => {
    // POLL_REQUESTS_PER_SECOND=100 (default 1): every admitted poller polls within a second, so
    // that the log shows them all without waiting a second per poller.
    stack = await startStack({ config: { ...POLL, pollRequestsPerSecond: 100 } });
  });
  afterAll(() => stack.close());

  it('refuses a new poller past the bound with TOO_MANY_SUBSCRIPTIONS, and polls only the admitted', async () => {
    const { key, workspace } = newKey();
    const mins = Array.from({ length: BOUND + 5 }, (_, i) => 1_000 + i);
    const subscriptions = mins.map((min) => sse(key, ABOVE, { min }));
    await eventually(() => refused(subscriptions).length === 5, 10_000, 'five refusals');
    for (const subscription of refused(subscriptions)) {
      expect(subscription.payloads[0]?.errors?.[0]?.extensions).toEqual({
        code: 'TOO_MANY_SUBSCRIPTIONS',
        limit: BOUND,
        scope: 'key',
      });
      expect(await subscription.ended).toBeUndefined();
      expect(subscription.payloads).toHaveLength(1);
    }
    const admitted = mins.filter((_, i) => codeOf(subscriptions[i]!) === undefined);
    expect(admitted).toHaveLength(BOUND);
    const polled = () =>
      new Set(
        polls((entry) => entry.workspace === workspace).map((e) => e.params['minAmountUsd']?.[0]),
      );
    // Each admitted poller polls (twice, so that a refused one would have had its time too).
    await eventually(
      () => polls((entry) => entry.workspace === workspace).length >= 2 * BOUND,
      10_000,
      'two polls per admitted poller',
    );
    expect(polled()).toEqual(new Set(admitted.map(String)));
    expect(await pollers()).toBe(BOUND);

    // Joining an existing poller is always fine; another key has a bound of its own.
    const joined = sse(key, ABOVE, { min: admitted[0] });
    const other = newKey();
    const elsewhere = sse(other.key, ABOVE, { min: 1_000 });
    await eventually(
      async () => (await subscribers()) === BOUND + 2,
      5_000,
      'two more subscribers',
    );
    expect(await pollers()).toBe(BOUND + 1);

    // A poller stopped with its last subscriber makes room for a new one.
    subscriptions[mins.indexOf(admitted[1]!)]!.leave();
    await eventually(async () => (await pollers()) === BOUND, 5_000, 'a poller stopped');
    const late = sse(key, ABOVE, { min: 9_999 });
    await eventually(() => polled().has('9999'), 5_000, "the new poller's poll");
    for (const subscription of [joined, elsewhere, late]) expect(subscription.payloads).toEqual([]);
  });
});

describe('poll requests per upstream key (POLL_REQUESTS_PER_SECOND)', () => {
  beforeAll(async () => {
    stack = await startStack({ config: POLL });
  });
  afterAll(() => stack.close());

  it("keeps a rate-limited key's queries going while 150 subscriptions poll with it", async () => {
    // The service allows this key 5 requests per second: the pollers may take RATE of them.
    const { key, workspace } = newKey({ ratePerSecond: 5 });
    const subscriptions = Array.from({ length: 150 }, (_, i) => sse(key, ABOVE, { min: i }));
    await eventually(
      async () => (await subscribers()) + refused(subscriptions).length === 150,
      15_000,
      'every subscription admitted or refused',
    );
    expect(refused(subscriptions)).toHaveLength(150 - BOUND);
    const from = Date.now();
    const answers = [];
    for (let i = 0; i < 20; i++) {
      answers.push(
        await stack.gql(
          `{ fundingEvents(first: 1) { nodes { uuid } } }`,
          {},
          { key, headers: NO_CACHE },
        ),
      );
      await sleep(400);
    }
    const until = Date.now();
    const tooMany = answers.filter((answer) =>
      answer.errors?.some((error) => error.extensions?.['code'] === 'TOO_MANY_REQUESTS'),
    );
    expect(tooMany.length).toBeLessThanOrEqual(1);
    expect(
      answers.filter((answer) => answer.data?.fundingEvents?.nodes?.length === 1).length,
    ).toBeGreaterThanOrEqual(19);

    // The polls went on, at most RATE in any second (100 ms for the network's jitter).
    const times = polls((entry) => entry.at >= from && entry.at <= until).map((entry) => entry.at);
    expect(times.length).toBeGreaterThanOrEqual(((until - from) / 1000) * RATE * 0.5);
    for (let i = 0; i + RATE < times.length; i++) {
      expect(times[i + RATE]! - times[i]!).toBeGreaterThanOrEqual(900);
    }
    expect(polls((entry) => entry.workspace === workspace && entry.status === 429).length).toBe(0);
  });

  it('backs off every poller of a key for the Retry-After of a 429 on one poll, and loses nothing', async () => {
    const { key, workspace } = newKey();
    const rounds = ['limits_1', 'limits_2', 'limits_3'];
    const mine = (entry: RequestLogEntry) => rounds.includes(entry.params['round']?.[0] ?? '');
    const subscriptions = rounds.map((round) => sse(key, ROUNDS, { round: [round] }));
    await eventually(
      () => new Set(polls(mine).map((entry) => entry.params['round']?.[0])).size === 3,
      10_000,
      'a poll of each poller',
    );
    // The next request to the service (nothing else is running: a poll) gets a 429.
    stack.sandbox.scriptFaults([{ kind: 'tooManyRequests', retryAfter: 4 }]);
    await eventually(() => polls(mine).some((entry) => entry.status === 429), 10_000, 'a 429');
    const hit = polls(mine).find((entry) => entry.status === 429)!;
    stack.sandbox.addEvents(rounds.map((round) => ({ kind: 'fundingEvent' as const, round })));
    for (const subscription of subscriptions) await subscription.next(1, 15_000);

    // Nothing polled during the pause (250 ms for the network's jitter); all polled after it.
    const pauseEnds = hit.at + 4_000 - 250;
    expect(polls((entry) => mine(entry) && entry.at > hit.at && entry.at < pauseEnds)).toEqual([]);
    const after = polls((entry) => mine(entry) && entry.at >= pauseEnds);
    expect(new Set(after.map((entry) => entry.params['round']?.[0])).size).toBe(3);
    expect(after.every((entry) => entry.workspace === workspace && entry.status === 200)).toBe(
      true,
    );
  });
});
