import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig, type Config } from '../../src/config.js';
import type { RequestLogEntry } from '../../src/sandbox/index.js';
import { parseMetrics, valueOf } from '../helpers/prometheus.js';
import { startStack, type Stack } from '../helpers/start-stack.js';
import { eventually, subscribeSse, type Subscribed } from '../helpers/subscribe.js';

// POLL_INTERVAL_SECONDS=1 (default 30): every poller wants a poll a second, so that a few seconds
// hold many polls and the per-key bounds show. MAX_POLLERS_PER_KEY is its default.
const POLL: Partial<Config> = { pollIntervalSeconds: 1 };

const BOUND = defaultConfig.maxPollersPerKey;

/** One poller per amount: each value of `min` is a distinct filter. */
const ABOVE = `subscription Above($min: Float) { fundingEventAdded(minAmountUsd: $min) { uuid } }`;

let stack: Stack;
const open: Subscribed[] = [];

/** Keys are made per test (the sandbox keeps added keys across resets): one workspace each. */
let keys = 0;
function newKey(): { key: string; workspace: string } {
  const key = `limits-key-${++keys}`;
  return { key, workspace: stack.sandbox.addKey(key) };
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
    stack = await startStack({ config: POLL });
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
