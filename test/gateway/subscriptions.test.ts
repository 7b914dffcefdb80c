import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseMetrics, valueOf } from '../helpers/prometheus.js';
import { startGateway, startStack, type Stack } from '../helpers/start-stack.js';
import {
  eventually,
  subscribeSse,
  subscribeWs,
  wsClient,
  type Subscribed,
} from '../helpers/subscribe.js';

// POLL_INTERVAL_SECONDS=1 (default 30): the checks poll every second, so that a test
// sees several polls in a few seconds. Every other setting is the default.
const POLL = { pollIntervalSeconds: 1 };

const ROUNDS = `subscription Rounds($round: [String!], $since: DateTime) {
  fundingEventAdded(round: $round, since: $since) {
    id uuid round discoveredAt announcedAt company { name }
  }
}`;

let stack: Stack;
const open: Subscribed[] = [];

beforeAll(async () => {
  stack = await startStack({ config: POLL });
});
afterAll(() => stack.close());
afterEach(async () => {
  for (const subscription of open.splice(0)) subscription.leave();
  // Every poller stops once its last subscriber left: the next test starts from none.
  await eventually(async () => (await pollers()) === 0, 5_000, 'no pollers');
  stack.sandbox.reset();
});

function sse(query: string, variables: Record<string, unknown>, headers = {}) {
  const subscription = subscribeSse(
    stack.url,
    query,
    {
      'x-api-key': stack.sandbox.keys.demo,
      ...headers,
    },
    variables,
  );
  open.push(subscription);
  return subscription;
}

async function metrics() {
  return parseMetrics(await (await fetch(`${stack.origin}/metrics`)).text());
}

async function subscribers(): Promise<number> {
  return valueOf(await metrics(), 'gateway_subscription_subscribers');
}

async function pollers(): Promise<number> {
  return valueOf(await metrics(), 'gateway_subscription_pollers');
}

/** When the test began: a poll still in flight from the test before is not its own. */
let began = 0;
beforeEach(() => {
  began = Date.now();
});

/** The sandbox's requests of the funding-events list with `since` in this test: the polls. */
function polls() {
  return stack.sandbox
    .requestLog()
    .filter(
      (entry) =>
        entry.endpoint === '/v1/funding-events' && entry.params['since'] && entry.at >= began,
    );
}

/** Waits for the subscriptions' first poll, so that events added next are new to them. */
async function polled(count = 1) {
  await eventually(() => polls().length >= count, 5_000, `${count} polls`);
}

describe('subscriptions over SSE', () => {
  it('delivers exactly the matching new events, oldest first, and pays once for each', async () => {
    const subscription = sse(ROUNDS, { round: ['series_b'] });
    await polled();
    const added = stack.sandbox.addEvents({ kind: 'fundingEvent', round: 'series_b', count: 3 });
    stack.sandbox.addEvents({ kind: 'fundingEvent', round: 'seed', count: 2 });
    const payloads = await subscription.next(3);
    const uuids = payloads.map((p) => p.data?.['fundingEventAdded'].uuid);
    const oldestFirst = [...added]
      .sort((a, b) => a.discoveredAt.localeCompare(b.discoveredAt) || a.id.localeCompare(b.id))
      .map((event) => event.id);
    expect(uuids).toEqual(oldestFirst);
    for (const payload of payloads) {
      expect(payload.data?.['fundingEventAdded'].round).toBe('series_b');
      expect(payload.data?.['fundingEventAdded'].company.name).toEqual(expect.any(String));
    }
    // A few more polls find nothing new: nothing more is delivered, nothing more is charged.
    const seen = polls().length;
    await polled(seen + 2);
    expect(subscription.payloads).toHaveLength(3);
    expect(polls().every((entry) => entry.params['round']?.[0] === 'series_b')).toBe(true);
    expect(polls().reduce((sum, entry) => sum + entry.records, 0)).toBe(3);
    expect(payloads.at(-1)?.extensions?.['credits']).toMatchObject({
      used: 1,
      spent: 3,
      budget: 1000,
      left: 997,
    });
  });

  it('shares one poller among ten subscribers of the same filters, and pays once', async () => {
    const subscriptions = Array.from({ length: 10 }, () => sse(ROUNDS, { round: ['series_c'] }));
    await eventually(async () => (await subscribers()) === 10, 5_000, 'ten subscribers');
    await polled();
    expect(await pollers()).toBe(1);
    stack.sandbox.addEvents({ kind: 'fundingEvent', round: 'series_c', count: 3 });
    for (const subscription of subscriptions) await subscription.next(3);
    expect(polls().reduce((sum, entry) => sum + entry.records, 0)).toBe(3);
    const samples = await metrics();
    expect(valueOf(samples, 'gateway_subscription_subscribers')).toBe(10);
    expect(valueOf(samples, 'gateway_subscription_credits_total')).toBeGreaterThanOrEqual(3);
  });

  it('keeps two workspaces apart: two pollers, each paying for its own', async () => {
    const demo = sse(ROUNDS, { round: ['series_d'] });
    const other = sse(
      ROUNDS,
      { round: ['series_d'] },
      { 'x-api-key': stack.sandbox.keys.lowCredit },
    );
    await eventually(() => new Set(polls().map((entry) => entry.workspace)).size === 2, 5_000);
    expect(await pollers()).toBe(2);
    stack.sandbox.addEvents({ kind: 'fundingEvent', round: 'series_d', count: 2 });
    await demo.next(2);
    await other.next(2);
    const byWorkspace = new Map<string | null, number>();
    for (const entry of polls()) {
      byWorkspace.set(entry.workspace, (byWorkspace.get(entry.workspace) ?? 0) + entry.records);
    }
    expect([...byWorkspace.values()]).toEqual([2, 2]);
  });

  it('delivers a record the service returns again through its announcement date once', async () => {
    const subscription = sse(ROUNDS, { round: ['series_e'] });
    await polled();
    // Announced in the future: every poll's `since` matches it again (and the service charges it
    // again); the subscriber gets it once.
    const [event] = stack.sandbox.addEvents({
      kind: 'fundingEvent',
      round: 'series_e',
      announcedAt: new Date(Date.now() + 86_400_000).toISOString(),
    });
    await subscription.next(1);
    await eventually(
      () => polls().filter((entry) => entry.records > 0).length >= 3,
      8_000,
      'three polls returning the record',
    );
    expect(subscription.payloads.map((p) => p.data?.['fundingEventAdded'].uuid)).toEqual([
      event!.id,
    ]);
    expect(
      valueOf(await metrics(), 'gateway_subscription_records_total', { kind: 'repeat' }),
    ).toBeGreaterThanOrEqual(2);
  });

  it('loses no event while the service fails, and delivers them once it is back', async () => {
    const subscription = sse(ROUNDS, { round: ['series_f'] });
    await polled();
    stack.sandbox.setFaults({ serverError: 1 });
    stack.sandbox.addEvents({ kind: 'fundingEvent', round: 'series_f', count: 2 });
    await eventually(() => polls().some((entry) => entry.status === 500), 5_000, 'a 500');
    stack.sandbox.scriptFaults([{ kind: 'tooManyRequests', retryAfter: 1 }]);
    stack.sandbox.setFaults({});
    // The poller backs off (2 s, 4 s...) and honours Retry-After, then catches up.
    await subscription.next(2, 15_000);
    expect(subscription.payloads).toHaveLength(2);
  });

  it('ends with CREDIT_BUDGET_EXHAUSTED after as many records as its budget', async () => {
    const subscription = sse(ROUNDS, { round: ['series_g'] }, { 'x-credit-budget': '2' });
    await polled();
    stack.sandbox.addEvents({ kind: 'fundingEvent', round: 'series_g', count: 3 });
    await subscription.ended;
    const [first, second, last] = subscription.payloads;
    expect(first?.data?.['fundingEventAdded']).toBeTruthy();
    expect(second?.extensions?.['credits']).toMatchObject({ spent: 2, left: 0, budget: 2 });
    expect(last?.errors?.[0]?.extensions?.['code']).toBe('CREDIT_BUDGET_EXHAUSTED');
    expect(subscription.payloads).toHaveLength(3);
  });

  it('starts from a past moment with since, paying for no more records than its budget', async () => {
    const since = new Date(Date.now() - 1_000).toISOString();
    const [old] = stack.sandbox.addEvents({ kind: 'fundingEvent', round: 'series_h' });
    const subscription = sse(ROUNDS, { round: ['series_h'], since });
    const [payload] = await subscription.next(1);
    expect(payload?.data?.['fundingEventAdded'].uuid).toBe(old!.id);
    expect(polls()[0]?.params['since']?.[0]).toBe(since);
  });

  it('refuses a bad filter before anything is polled', async () => {
    const subscription = sse(`subscription { fundingEventAdded(minAmountUsd: -5) { id } }`, {});
    await subscription.ended;
    expect(subscription.payloads[0]?.errors?.[0]?.extensions).toMatchObject({
      code: 'INVALID_INPUT',
      argument: 'minAmountUsd',
    });
    expect(polls()).toHaveLength(0);
  });

  it('ends its subscriptions with PAYMENT_REQUIRED when the workspace has no credits', async () => {
    const subscription = sse(
      ROUNDS,
      { round: ['series_i'] },
      {
        'x-api-key': stack.sandbox.keys.noCredit,
      },
    );
    await polled();
    stack.sandbox.addEvents({ kind: 'fundingEvent', round: 'series_i' });
    await subscription.ended;
    expect(subscription.payloads.at(-1)?.errors?.[0]?.extensions?.['code']).toBe(
      'PAYMENT_REQUIRED',
    );
  });

  it('forgets a client that leaves: its poller stops', async () => {
    const subscription = sse(ROUNDS, { round: ['series_j'] });
    await polled();
    expect(await pollers()).toBe(1);
    subscription.leave();
    await eventually(async () => (await pollers()) === 0, 2_000, 'the poller stopped');
    const count = polls().length;
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(polls().length).toBe(count);
  });
});

describe('subscriptions over WebSocket (graphql-transport-ws)', () => {
  it('takes the key and the budget from connection_init and delivers new events', async () => {
    const client = wsClient(stack.url, {
      'X-API-Key': stack.sandbox.keys.demo,
      'x-credit-budget': '5',
    });
    try {
      const subscription = subscribeWs(client, ROUNDS, { round: ['series_k'] });
      open.push(subscription);
      await polled();
      stack.sandbox.addEvents({ kind: 'fundingEvent', round: 'series_k', count: 2 });
      const payloads = await subscription.next(2);
      expect(payloads.map((p) => p.data?.['fundingEventAdded'].round)).toEqual([
        'series_k',
        'series_k',
      ]);
      expect(payloads[1]?.extensions?.['credits']).toMatchObject({ budget: 5, spent: 2, left: 3 });
    } finally {
      await client.dispose();
    }
  });

  it('refuses an operation without a key, and polls nothing', async () => {
    const client = wsClient(stack.url, {});
    try {
      const subscription = subscribeWs(client, ROUNDS, { round: ['series_l'] });
      await subscription.ended;
      expect(subscription.payloads[0]?.errors?.[0]?.extensions?.['code']).toBe('UNAUTHORIZED');
      expect(polls()).toHaveLength(0);
    } finally {
      await client.dispose();
    }
  });
});

describe('shutting down', () => {
  it('completes every subscription: SSE streams end, WebSocket subscriptions get complete', async () => {
    const gateway = await startGateway(stack.sandbox, { config: POLL });
    const client = wsClient(gateway.url, { 'X-API-Key': stack.sandbox.keys.demo });
    const overSse = subscribeSse(
      gateway.url,
      ROUNDS,
      { 'x-api-key': stack.sandbox.keys.demo },
      { round: ['series_m'] },
    );
    const overWs = subscribeWs(client, ROUNDS, { round: ['series_m'] });
    await polled();
    await gateway.shutdown();
    // Both ended without an error: a `complete`, not a connection cut at the end of the grace
    // period (which graphql-sse and graphql-ws report as errors).
    expect(await overSse.ended).toBeUndefined();
    expect(await overWs.ended).toBeUndefined();
    await client.dispose();
  });
});
