import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { parseMetrics, valueOf } from '../helpers/prometheus.js';
import { startStack, type Stack } from '../helpers/start-stack.js';
import {
  eventually,
  subscribeSse,
  subscribeWs,
  wsClient,
  type Subscribed,
} from '../helpers/subscribe.js';

// The defaults as shipped (MAX_REQUEST_BYTES 1,000,000; MAX_SUBSCRIPTIONS_PER_CONNECTION 25;
// MAX_SUBSCRIPTIONS_PER_PRINCIPAL 100), but for POLL_INTERVAL_SECONDS=1 (default 30), so that the
// subscriptions' poller is seen within a second.
let stack: Stack;
const open: Subscribed[] = [];
const clients: { dispose(): unknown }[] = [];

beforeAll(async () => {
  stack = await startStack({ config: { pollIntervalSeconds: 1 } });
});
afterAll(() => stack.close());
afterEach(async () => {
  for (const subscription of open.splice(0)) subscription.leave();
  for (const client of clients.splice(0)) await client.dispose();
  await eventually(async () => (await subscribers()) === 0, 5_000, 'no subscribers left');
});

const ROUNDS = `subscription { fundingEventAdded(round: ["seed"]) { uuid } }`;

let keys = 0;
function freshKey(): string {
  const key = `bounds-${++keys}`;
  stack.sandbox.addKey(key);
  return key;
}

function socket(key: string) {
  const client = wsClient(stack.url, { 'X-API-Key': key });
  clients.push(client);
  return client;
}

/** Subscriptions open on the gateway, by its metrics. */
async function subscribers(): Promise<number> {
  const text = await (await fetch(`${stack.origin}/metrics`)).text();
  return valueOf(parseMetrics(text), 'gateway_subscription_subscribers');
}

const codeOf = (subscription: Subscribed) =>
  subscription.payloads[0]?.errors?.[0]?.extensions?.['code'];
const scopeOf = (subscription: Subscribed) =>
  subscription.payloads[0]?.errors?.[0]?.extensions?.['scope'];

describe('WebSocket messages are bounded by MAX_REQUEST_BYTES before they are parsed', () => {
  it('a 5 MB connection_init closes the socket with 1009, unacknowledged', async () => {
    const raw = new WebSocket(stack.url.replace(/^http/, 'ws'), 'graphql-transport-ws');
    const messages: string[] = [];
    raw.on('message', (data) => messages.push(String(data)));
    const closed = new Promise<number>((resolve) => raw.on('close', (code) => resolve(code)));
    raw.on('error', () => undefined);
    await new Promise((resolve) => raw.once('open', resolve));
    raw.send(
      JSON.stringify({ type: 'connection_init', payload: { padding: 'x'.repeat(5_000_000) } }),
    );
    expect(await closed).toBe(1009);
    expect(messages).toEqual([]);
  });

  it('a message within the bound is read as usual', async () => {
    const client = socket(stack.sandbox.keys.demo);
    const [payload] = await (async () => {
      const query = subscribeWs(client, `{ companies(first: 1) { nodes { id } } }`);
      await query.ended;
      return query.payloads;
    })();
    expect(payload?.data?.['companies'].nodes).toHaveLength(1);
  });
});

describe('open subscriptions are bounded per connection and per principal', () => {
  it('one WebSocket: 25 run, the 26th is refused (TOO_MANY_SUBSCRIPTIONS, scope connection)', async () => {
    const key = freshKey();
    const client = socket(key);
    const subscriptions = Array.from({ length: 26 }, () => subscribeWs(client, ROUNDS));
    open.push(...subscriptions);
    await eventually(() => subscriptions[25]!.payloads.length > 0, 10_000, 'the refusal');
    expect(codeOf(subscriptions[25]!)).toBe('TOO_MANY_SUBSCRIPTIONS');
    expect(scopeOf(subscriptions[25]!)).toBe('connection');
    expect(subscriptions[25]!.payloads[0]?.errors?.[0]?.extensions?.['limit']).toBe(25);
    await eventually(async () => (await subscribers()) === 25, 5_000, '25 subscribers');
    expect(subscriptions.slice(0, 25).every((s) => s.payloads.length === 0)).toBe(true);
    // Once one ends, another fits.
    subscriptions[0]!.leave();
    await eventually(async () => (await subscribers()) === 24, 5_000, '24 subscribers');
    const again = subscribeWs(client, ROUNDS);
    open.push(again);
    await eventually(async () => (await subscribers()) === 25, 5_000, '25 subscribers again');
    expect(again.payloads).toEqual([]);
  });

  it('hundreds from one principal: 100 run (WebSocket and SSE together), the rest are refused', async () => {
    const key = freshKey();
    const running: Subscribed[] = [];
    for (let socketNo = 0; socketNo < 4; socketNo++) {
      const client = socket(key);
      for (let i = 0; i < 24; i++) running.push(subscribeWs(client, ROUNDS));
    }
    for (let i = 0; i < 4; i++) {
      running.push(subscribeSse(stack.url, ROUNDS, { 'x-api-key': key }));
    }
    open.push(...running);
    await eventually(async () => (await subscribers()) === 100, 10_000, '100 subscribers');
    // 100 open: one more, by either door, is refused before it starts.
    const overWs = subscribeWs(socket(key), ROUNDS);
    const overSse = subscribeSse(stack.url, ROUNDS, { 'x-api-key': key });
    open.push(overWs, overSse);
    await overWs.ended;
    await overSse.ended;
    for (const refused of [overWs, overSse]) {
      expect(codeOf(refused)).toBe('TOO_MANY_SUBSCRIPTIONS');
      expect(scopeOf(refused)).toBe('principal');
      expect(refused.payloads[0]?.errors?.[0]?.extensions?.['limit']).toBe(100);
    }
    expect(running.every((s) => s.payloads.length === 0)).toBe(true);
    // Another principal is not touched by it.
    const other = subscribeSse(stack.url, ROUNDS, { 'x-api-key': freshKey() });
    open.push(other);
    await eventually(async () => (await subscribers()) === 101, 5_000, 'another principal');
    expect(other.payloads).toEqual([]);
  });
});
