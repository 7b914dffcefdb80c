import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseCreditQuota } from '../../src/credits/quota/credit-quota.js';
import { spentOn, startStack, type Stack } from '../helpers/start-stack.js';
import {
  eventually,
  subscribeSse,
  subscribeWs,
  wsClient,
  type Subscribed,
} from '../helpers/subscribe.js';

// CREDIT_QUOTA=100/hour (default: none), the outside review's setting: a quota small against
// what a `since` catch-up could fetch. POLL_INTERVAL_SECONDS=1 (default 30) so that a test sees
// polls within seconds. Every other setting is the default.
const QUOTA = parseCreditQuota('100/hour')!;

const SINCE = `subscription Since($since: DateTime) {
  fundingEventAdded(since: $since) { uuid }
}`;

let stack: Stack;
const open: Subscribed[] = [];
const clients: { dispose(): unknown }[] = [];

beforeAll(async () => {
  stack = await startStack({ config: { creditQuota: QUOTA, pollIntervalSeconds: 1 } });
});
afterAll(() => stack.close());
afterEach(async () => {
  for (const subscription of open.splice(0)) subscription.leave();
  for (const client of clients.splice(0)) await client.dispose();
});

/** A key of its own per test (a bucket of its own, full), and its workspace in the log. */
let keys = 0;
const workspaces = new Map<string, string>();
function freshKey(): string {
  const key = `quota-sub-${++keys}`;
  workspaces.set(key, stack.sandbox.addKey(key));
  return key;
}

/** What the sandbox charged `key`, and the requests it made with it. */
function charged(key: string) {
  const workspace = workspaces.get(key);
  const mine = stack.sandbox.requestLog().filter((entry) => entry.workspace === workspace);
  return { requests: mine.length, credits: mine.reduce((sum, entry) => sum + entry.records, 0) };
}

function sse(key: string, budget = '2000') {
  const subscription = subscribeSse(
    stack.url,
    SINCE,
    { 'x-api-key': key, 'x-credit-budget': budget },
    { since: '2000-01-01T00:00:00Z' },
  );
  open.push(subscription);
  return subscription;
}

function ws(key: string, budget = '2000') {
  const client = wsClient(stack.url, { 'X-API-Key': key, 'X-Credit-Budget': budget });
  clients.push(client);
  const subscription = subscribeWs(client, SINCE, { since: '2000-01-01T00:00:00Z' });
  open.push(subscription);
  return subscription;
}

const codeOf = (subscription: Subscribed) =>
  subscription.payloads.at(-1)?.errors?.[0]?.extensions?.['code'];

describe.each([
  ['SSE', sse],
  ['WebSocket', ws],
])(
  'a subscription with `since` in the past, over %s, under CREDIT_QUOTA=100/hour',
  (_door, subscribe) => {
    it('fetches no more than its bucket holds: three with a budget of 2000 spend 100 in all', async () => {
      const key = freshKey();
      const first = subscribe(key);
      await first.next(100);
      // The bucket is empty now: the next two are refused before anything is fetched for them.
      const second = subscribe(key);
      const third = subscribe(key);
      await second.ended;
      await third.ended;
      expect(codeOf(second)).toBe('CREDIT_QUOTA_EXCEEDED');
      expect(codeOf(third)).toBe('CREDIT_QUOTA_EXCEEDED');
      expect(second.payloads).toHaveLength(1);
      expect(second.payloads[0]?.errors?.[0]?.extensions).toMatchObject({ limit: 100 });
      // Polls find nothing new; what the service charged the key is its quota, not 3 × 2000.
      const spent = charged(key);
      expect(spent.credits).toBe(100);
      expect(first.payloads).toHaveLength(100);
      expect(first.payloads.every((payload) => payload.data?.['fundingEventAdded'].uuid)).toBe(
        true,
      );
      expect(first.payloads.at(-1)?.extensions?.['credits']).toMatchObject({
        spent: 100,
        quota: { limit: 100 },
      });
    });

    it('with its bucket already empty: CREDIT_QUOTA_EXCEEDED before any upstream request', async () => {
      const key = freshKey();
      const spend = await stack.gql('{ companies(first: 100) { nodes { id } } }', undefined, {
        key,
        headers: { 'cache-control': 'no-cache' },
      });
      expect(spend.extensions?.credits.used).toBe(100);
      const before = charged(key);
      const refused = subscribe(key);
      await refused.ended;
      expect(codeOf(refused)).toBe('CREDIT_QUOTA_EXCEEDED');
      expect(refused.payloads).toHaveLength(1);
      expect(charged(key)).toEqual(before);
    });
  },
);

describe('a subscription without `since`, under CREDIT_QUOTA=100/hour', () => {
  it('is refused at once when the bucket cannot hold one record, and polls nothing', async () => {
    const key = freshKey();
    await stack.gql('{ companies(first: 100) { nodes { id } } }', undefined, {
      key,
      headers: { 'cache-control': 'no-cache' },
    });
    const before = charged(key);
    const subscription = subscribeSse(stack.url, SINCE, { 'x-api-key': key }, {});
    open.push(subscription);
    await subscription.ended;
    expect(codeOf(subscription)).toBe('CREDIT_QUOTA_EXCEEDED');
    expect(charged(key)).toEqual(before);
  });

  it('draws each record it delivers from the bucket: a credit each, the rest of the quota untouched', async () => {
    const key = freshKey();
    const subscription = subscribeSse(stack.url, SINCE, { 'x-api-key': key }, {});
    open.push(subscription);
    await eventually(() => charged(key).requests > 0, 5_000, 'the first poll');
    stack.sandbox.addEvents({ kind: 'fundingEvent', count: 3 });
    const payloads = await subscription.next(3);
    expect(payloads.at(-1)?.extensions?.['credits']).toMatchObject({
      spent: 3,
      quota: { limit: 100, remaining: 97 },
    });
    expect(spentOn(stack.sandbox).credits).toBeGreaterThanOrEqual(3);
  });
});
