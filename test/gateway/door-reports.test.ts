import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { captureLog } from '../helpers/capture-log.js';
import { parseMetrics, valueOf } from '../helpers/prometheus.js';
import { startStack, type Stack } from '../helpers/start-stack.js';
import {
  eventually,
  subscribeSse,
  subscribeWs,
  wsClient,
  type Subscribed,
} from '../helpers/subscribe.js';

// POLL_INTERVAL_SECONDS=1 (default 30), so that subscriptions see their events within a second;
// logs captured at `info` (the operation lines). Every other setting is the default.
const log = captureLog('info');
let stack: Stack;
const open: Subscribed[] = [];
const clients: { dispose(): unknown }[] = [];

beforeAll(async () => {
  stack = await startStack({ config: { pollIntervalSeconds: 1 }, logger: log.logger });
});
afterAll(() => stack.close());
beforeEach(() => {
  log.lines.length = 0;
});
afterEach(async () => {
  for (const subscription of open.splice(0)) subscription.leave();
  for (const client of clients.splice(0)) await client.dispose();
});

const operations = () => log.lines.filter((line) => line.msg === 'operation');

async function metrics() {
  return parseMetrics(await (await fetch(`${stack.origin}/metrics`)).text());
}

const LIST = `query List { fundingEvents(first: 3) { nodes { uuid } } }`;
const ROUNDS = `subscription Rounds($round: [String!]) {
  fundingEventAdded(round: $round) { uuid round }
}`;

function socket() {
  const client = wsClient(stack.url, { 'X-API-Key': stack.sandbox.keys.demo });
  clients.push(client);
  return client;
}

function budgeted(budget: string) {
  const client = wsClient(stack.url, {
    'X-API-Key': stack.sandbox.keys.demo,
    'X-Credit-Budget': budget,
  });
  clients.push(client);
  return client;
}

describe('every door is reported alike: one operation line and gateway_operations_total', () => {
  it('a query over WebSocket: its line (door, credits, request id) and its count', async () => {
    const counted = valueOf(await metrics(), 'gateway_operations_total', { operation: 'List' });
    const query = subscribeWs(socket(), LIST);
    await query.ended;
    expect(query.payloads[0]?.extensions?.['credits']).toMatchObject({ used: expect.any(Number) });
    const [line] = operations();
    expect(line).toMatchObject({
      door: 'websocket',
      operation: 'List',
      type: 'query',
      status: null,
      outcome: 'ok',
      creditsUsed: query.payloads[0]?.extensions?.['credits'].used,
      creditsEstimate: 3,
      upstreamRequests: query.payloads[0]?.extensions?.['upstreamRequests'],
    });
    expect(line?.['requestId']).toMatch(/^[0-9a-f-]{36}$/);
    expect(operations()).toHaveLength(1);
    expect(valueOf(await metrics(), 'gateway_operations_total', { operation: 'List' })).toBe(
      counted + 1,
    );
  });

  it('a query over WebSocket refused before it runs is reported with its code', async () => {
    const query = subscribeWs(socket(), '{ fundingEvents(first: 3) { nope } }');
    await query.ended;
    expect(operations()).toEqual([
      expect.objectContaining({
        door: 'websocket',
        outcome: 'error',
        codes: ['GRAPHQL_VALIDATION_FAILED'],
      }),
    ]);
  });

  it.each([
    ['SSE', 'http'],
    ['WebSocket', 'websocket'],
  ])(
    'a subscription over %s: one line when it ends, with its payloads, credits, code and duration',
    async (door, reported) => {
      const round = door === 'SSE' ? 'series_m' : 'series_n';
      const subscription =
        door === 'SSE'
          ? subscribeSse(
              stack.url,
              ROUNDS,
              { 'x-api-key': stack.sandbox.keys.demo, 'x-credit-budget': '2' },
              { round: [round] },
            )
          : subscribeWs(budgeted('2'), ROUNDS, { round: [round] });
      open.push(subscription);
      await eventually(
        () => stack.sandbox.requestLog().some((entry) => entry.params['round']?.[0] === round),
        5_000,
        'the first poll',
      );
      const counted = valueOf(await metrics(), 'gateway_operations_total', {
        operation: 'Rounds',
        outcome: 'partial',
      });
      stack.sandbox.addEvents({ kind: 'fundingEvent', round, count: 3 });
      await subscription.ended;
      expect(subscription.payloads.at(-1)?.errors?.[0]?.extensions?.['code']).toBe(
        'CREDIT_BUDGET_EXHAUSTED',
      );
      await eventually(() => operations().length > 0, 2_000, 'its line');
      const lines = operations();
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({
        door: reported,
        operation: 'Rounds',
        type: 'subscription',
        outcome: 'partial',
        payloads: 2,
        creditsUsed: 2,
        creditsSpent: 2,
        creditsBudget: 2,
        codes: ['CREDIT_BUDGET_EXHAUSTED'],
      });
      expect(lines[0]?.['ms']).toBeGreaterThan(0);
      expect(
        valueOf(await metrics(), 'gateway_operations_total', {
          operation: 'Rounds',
          outcome: 'partial',
        }),
      ).toBe(counted + 1);
      expect(
        valueOf(await metrics(), 'gateway_operation_errors_total', {
          code: 'CREDIT_BUDGET_EXHAUSTED',
        }),
      ).toBeGreaterThanOrEqual(1);
    },
  );

  it('a subscription the client leaves is reported ok, with what it delivered', async () => {
    const subscription = subscribeWs(socket(), ROUNDS, { round: ['series_o'] });
    await eventually(
      () => stack.sandbox.requestLog().some((entry) => entry.params['round']?.[0] === 'series_o'),
      5_000,
      'the first poll',
    );
    stack.sandbox.addEvents({ kind: 'fundingEvent', round: 'series_o' });
    await subscription.next(1);
    subscription.leave();
    await eventually(() => operations().length > 0, 2_000, 'its line');
    expect(operations()[0]).toMatchObject({
      door: 'websocket',
      type: 'subscription',
      outcome: 'ok',
      payloads: 1,
      creditsUsed: 1,
    });
  });
});
