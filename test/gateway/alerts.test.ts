import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openSqlite } from '../../src/alerts/open-sqlite.js';
import { parseCreditQuota } from '../../src/credits/quota/credit-quota.js';
import { captureLog } from '../helpers/capture-log.js';
import { parseMetrics, valueOf } from '../helpers/prometheus.js';
import { killGatewayProcesses, startGatewayProcess } from '../helpers/start-process.js';
import { startGateway, startStack, type Gateway, type Stack } from '../helpers/start-stack.js';
import { eventually, subscribeSse } from '../helpers/subscribe.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

// POLL_INTERVAL_SECONDS=1 (default 30) so that a test sees a poll each second;
// ALERT_RETRY_BASE_MS=100 (default 30 s) so that a retry comes in a fraction of a second;
// ALERT_DELIVERY_TIMEOUT_MS=2000 (default 10 s) so that a receiver that hangs fails in two.
// Everything else is the default: the sandbox, so loopback receivers are allowed (`auto`).
const SETTINGS = { pollIntervalSeconds: 1, alertRetryBaseMs: 100, alertDeliveryTimeoutMs: 2_000 };

const ROUNDS = `subscription Rounds($round: [String!]) {
  fundingEventAdded(round: $round) { uuid round company { name } }
}`;

const CREATE = `mutation Create($input: CreateAlertInput!) {
  createAlert(input: $input) { secret alert { id status url dailyBudget } }
}`;

const ALERT = `query One($id: ID!) {
  alert(id: $id) {
    id status reason spentToday
    deliveries(first: 20) {
      edges { node { id recordId status attempts lastHttpStatus lastError deliveredAt nextAttemptAt } }
    }
  }
}`;

let stack: Stack;
let receiver: WebhookReceiver;
const log = captureLog('info');
let began = 0;

/** A second workspace's key: another principal. */
const OTHER_KEY = 'alerts-other-key';

beforeAll(async () => {
  stack = await startStack({ config: SETTINGS, logger: log.logger });
  stack.sandbox.addKey(OTHER_KEY, { credits: 1e9 });
});
afterAll(async () => {
  await stack.close();
  killGatewayProcesses();
});
beforeEach(async () => {
  receiver = await startWebhookReceiver();
  began = Date.now();
});
afterEach(async () => {
  await deleteAll(stack, stack.sandbox.keys.demo);
  await deleteAll(stack, OTHER_KEY);
  await receiver.close();
  stack.sandbox.reset();
});

async function deleteAll(gateway: Gateway, key: string) {
  const listed = await gateway.gql(`{ alerts(first: 100) { edges { node { id } } } }`, {}, { key });
  for (const edge of listed.data?.alerts.edges ?? []) {
    await gateway.gql(`mutation($id: ID!) { deleteAlert(id: $id) }`, { id: edge.node.id }, { key });
  }
}

async function create(
  gateway: Gateway,
  input: Record<string, unknown>,
  key?: string,
): Promise<{ id: string; secret: string }> {
  const made = await gateway.gql(CREATE, { input: { url: receiver.url, ...input } }, { key });
  expect(made.errors).toBeUndefined();
  return { id: made.data.createAlert.alert.id, secret: made.data.createAlert.secret };
}

/** The sandbox's polls of the funding-events list (with `since`) in this test. */
function polls() {
  return stack.sandbox
    .requestLog()
    .filter(
      (entry) =>
        entry.endpoint === '/v1/funding-events' && entry.params['since'] && entry.at >= began,
    );
}

async function polled(count = 1) {
  await eventually(() => polls().length >= count, 10_000, `${count} polls`);
}

function verify(secret: string, received: WebhookReceiver['received'][number]) {
  const headers = Object.fromEntries(
    ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) => [
      name,
      String(received.headers[name]),
    ]),
  );
  return new Webhook(secret).verify(received.body, headers) as {
    data: { fundingEventAdded: { uuid: string; round: string } };
    extensions: { credits: { used: number } };
  };
}

describe('alerts over HTTP, against the sandbox', () => {
  it('delivers each matching new record as a signed POST of what a subscriber receives, paid once', async () => {
    const { id, secret } = await create(stack, {
      subscription: ROUNDS,
      variables: { round: ['series_b'] },
    });
    expect(secret).toMatch(/^whsec_/);
    // A subscriber of the same document, beside it: the same poll, the same payloads.
    const subscriber = subscribeSse(
      stack.url,
      ROUNDS,
      { 'x-api-key': stack.sandbox.keys.demo },
      { round: ['series_b'] },
    );
    try {
      await polled(1);
      const before = stack.sandbox.requestLog().length;
      const added = stack.sandbox.addEvents({ kind: 'fundingEvent', round: 'series_b', count: 2 });
      stack.sandbox.addEvents({ kind: 'fundingEvent', round: 'seed', count: 3 });
      await eventually(() => receiver.acknowledged().length >= 2, 15_000, 'two deliveries');
      const bodies = receiver.received.map((received) => verify(secret, received));
      expect(bodies.map((body) => body.data.fundingEventAdded.uuid).sort()).toEqual(
        added.map((event) => event.id).sort(),
      );
      expect(bodies.every((body) => body.data.fundingEventAdded.round === 'series_b')).toBe(true);
      // A wrong secret does not verify.
      expect(() =>
        verify(`whsec_${Buffer.alloc(24).toString('base64')}`, receiver.received[0]!),
      ).toThrow();
      const payloads = await subscriber.next(2);
      expect(payloads.map((p) => p.data?.['fundingEventAdded'].uuid).sort()).toEqual(
        added.map((event) => event.id).sort(),
      );
      // Paid once per matching record (the poll's) and one poll per second, however many follow it.
      const charged = stack.sandbox
        .requestLog()
        .slice(before)
        .reduce((sum, entry) => sum + entry.records, 0);
      expect(charged).toBe(2);
      const seen = await stack.gql(ALERT, { id });
      const deliveries = seen.data.alert.deliveries.edges.map((edge: any) => edge.node);
      expect(deliveries).toHaveLength(2);
      expect(deliveries.every((d: any) => d.status === 'DELIVERED' && d.attempts === 1)).toBe(true);
      expect(deliveries.map((d: any) => d.id).sort()).toEqual(receiver.acknowledged().sort());
      expect(seen.data.alert.spentToday).toBeGreaterThanOrEqual(2);
    } finally {
      subscriber.leave();
    }
  });

  it('retries a failing receiver with the same webhook-id until it acknowledges, at no credit', async () => {
    const { id, secret } = await create(stack, {
      subscription: ROUNDS,
      variables: { round: ['series_a'] },
    });
    await polled(1);
    receiver.answer(500, 503, 'hang');
    const [event] = stack.sandbox.addEvents({ kind: 'fundingEvent', round: 'series_a', count: 1 });
    const charged = () =>
      stack.sandbox
        .requestLog()
        .filter((entry) => entry.at >= began)
        .reduce((sum, entry) => sum + entry.records, 0);
    await eventually(() => receiver.acknowledged().length === 1, 30_000, 'the delivery');
    const ids = new Set(receiver.received.map((received) => received.headers['webhook-id']));
    expect(ids.size).toBe(1);
    expect(receiver.received.length).toBe(4);
    expect(receiver.received.map((received) => received.status)).toEqual([500, 503, 0, 200]);
    for (const received of receiver.received) {
      expect(verify(secret, received).data.fundingEventAdded.uuid).toBe(event!.id);
    }
    expect(charged()).toBe(1);
    const seen = await stack.gql(ALERT, { id });
    const [delivery] = seen.data.alert.deliveries.edges.map((edge: any) => edge.node);
    expect(delivery).toMatchObject({
      status: 'DELIVERED',
      attempts: 4,
      lastHttpStatus: 200,
      nextAttemptAt: null,
    });
    expect(delivery.deliveredAt).toEqual(expect.any(String));
    // One log line per attempt, and no secret in any of them.
    const attempts = log.lines.filter(
      (line) => line.msg === 'alert delivery' && line['delivery'] === delivery.id,
    );
    expect(attempts).toHaveLength(4);
    expect(log.text()).not.toContain(secret);
    expect(log.text()).not.toContain(stack.sandbox.keys.demo);
  }, 60_000);

  it('disables the alert on 410 Gone, with its reason in the graph', async () => {
    const { id } = await create(stack, {
      subscription: ROUNDS,
      variables: { round: ['series_c'] },
    });
    await polled(1);
    receiver.always(410);
    stack.sandbox.addEvents({ kind: 'fundingEvent', round: 'series_c', count: 1 });
    await eventually(
      async () => (await stack.gql(ALERT, { id })).data.alert.status === 'DISABLED',
      15_000,
      'disabled',
    );
    const seen = await stack.gql(ALERT, { id });
    expect(seen.data.alert.reason).toMatch(/410 Gone/);
    expect(seen.data.alert.deliveries.edges[0].node).toMatchObject({
      status: 'FAILED',
      attempts: 1,
      lastHttpStatus: 410,
    });
    expect(receiver.received).toHaveLength(1);
  });

  it('ten alerts on one filter share one poll a second and pay one credit per record', async () => {
    const made = [];
    for (let i = 0; i < 10; i++) {
      made.push(await create(stack, { subscription: ROUNDS, variables: { round: ['seed'] } }));
    }
    await polled(2);
    const start = polls().length;
    const startedAt = Date.now();
    const before = stack.sandbox.requestLog().length;
    const added = stack.sandbox.addEvents({ kind: 'fundingEvent', round: 'seed', count: 3 });
    await eventually(() => receiver.acknowledged().length >= 30, 20_000, '30 deliveries');
    const seconds = (Date.now() - startedAt) / 1000;
    // One poll per second for all ten (give or take the one in flight at each end).
    expect(polls().length - start).toBeLessThanOrEqual(Math.ceil(seconds) + 2);
    const charged = stack.sandbox
      .requestLog()
      .slice(before)
      .reduce((sum, entry) => sum + entry.records, 0);
    expect(charged).toBe(added.length);
    // Each alert got each record once, signed with its own secret.
    const ids = receiver.received.map((received) => String(received.headers['webhook-id']));
    expect(new Set(ids).size).toBe(30);
    for (const { secret } of made) {
      const mine = receiver.received.filter((received) => {
        try {
          verify(secret, received);
          return true;
        } catch {
          return false;
        }
      });
      expect(mine).toHaveLength(3);
    }
  }, 40_000);

  it("shows and changes only the caller's own alerts: another's id is not found", async () => {
    const { id } = await create(stack, { subscription: ROUNDS, variables: {} });
    const other = OTHER_KEY;
    expect((await stack.gql(ALERT, { id }, { key: other })).data.alert).toBeNull();
    const listed = await stack.gql(`{ alerts { edges { node { id } } } }`, {}, { key: other });
    expect(listed.data.alerts.edges).toEqual([]);
    for (const mutation of ['pauseAlert', 'resumeAlert', 'rotateAlertSecret']) {
      const tried = await stack.gql(
        `mutation($id: ID!) { ${mutation}(id: $id) { __typename } }`,
        { id },
        { key: other },
      );
      expect(tried.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    }
    const deleted = await stack.gql(
      `mutation($id: ID!) { deleteAlert(id: $id) }`,
      { id },
      { key: other },
    );
    expect(deleted.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    // Still there for its owner, untouched.
    expect((await stack.gql(ALERT, { id })).data.alert.status).toBe('ACTIVE');
    // Without a key: refused as every request without one is.
    const anonymous = await stack.gql(`{ alerts { edges { node { id } } } }`, {}, { key: null });
    expect(anonymous.errors?.[0]?.extensions?.code).toBe('UNAUTHORIZED');
  });

  it('pages the alerts newest first; an edge cursor and endCursor both continue', async () => {
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await create(stack, { subscription: ROUNDS })).id);
    const page = `query($after: String) {
      alerts(first: 2, after: $after) {
        edges { cursor node { id } } pageInfo { hasNextPage endCursor }
      }
    }`;
    const first = (await stack.gql(page, {})).data.alerts;
    expect(first.edges.map((e: any) => e.node.id)).toEqual([ids[2], ids[1]]);
    expect(first.pageInfo.hasNextPage).toBe(true);
    const next = (await stack.gql(page, { after: first.pageInfo.endCursor })).data.alerts;
    expect(next.edges.map((e: any) => e.node.id)).toEqual([ids[0]]);
    expect(next.pageInfo.hasNextPage).toBe(false);
    const fromEdge = (await stack.gql(page, { after: first.edges[0].cursor })).data.alerts;
    expect(fromEdge.edges.map((e: any) => e.node.id)).toEqual([ids[1], ids[0]]);
  });

  it('never answers a repeat view of the alerts from a kept answer: they change without the service', async () => {
    const query = `{ fundingEvents(first: 1) { nodes { uuid } } alerts { edges { node { id } } } }`;
    expect((await stack.gql(query)).data.alerts.edges).toEqual([]);
    const { id } = await create(stack, { subscription: ROUNDS, variables: {} });
    expect((await stack.gql(query)).data.alerts.edges).toEqual([{ node: { id } }]);
  });

  it('pauses, resumes and rotates: the new secret signs the next delivery', async () => {
    const { id, secret } = await create(stack, {
      subscription: ROUNDS,
      variables: { round: ['series_d'] },
    });
    const paused = await stack.gql(`mutation($id: ID!) { pauseAlert(id: $id) { status } }`, { id });
    expect(paused.data.pauseAlert.status).toBe('PAUSED');
    const rotated = await stack.gql(
      `mutation($id: ID!) { rotateAlertSecret(id: $id) { secret alert { id } } }`,
      { id },
    );
    const fresh = rotated.data.rotateAlertSecret.secret as string;
    expect(fresh).toMatch(/^whsec_/);
    expect(fresh).not.toBe(secret);
    const resumed = await stack.gql(`mutation($id: ID!) { resumeAlert(id: $id) { status } }`, {
      id,
    });
    expect(resumed.data.resumeAlert.status).toBe('ACTIVE');
    await polled(1);
    stack.sandbox.addEvents({ kind: 'fundingEvent', round: 'series_d', count: 1 });
    await eventually(() => receiver.acknowledged().length === 1, 15_000, 'the delivery');
    expect(() => verify(fresh, receiver.received[0]!)).not.toThrow();
    expect(() => verify(secret, receiver.received[0]!)).toThrow();
  });

  it('refuses bad input naming the argument and the rule, and keeps nothing of it', async () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [
        { subscription: '{ companies(first: 1) { edges { node { uuid } } } }' },
        'INVALID_INPUT',
        'input.subscription',
      ],
      [
        { subscription: 'subscription { companyAdded { uuid } }' },
        'GRAPHQL_VALIDATION_FAILED',
        'companyAdded',
      ],
      [{ subscription: ROUNDS, url: 'ftp://example.com/x' }, 'INVALID_INPUT', 'input.url'],
      [{ subscription: ROUNDS, dailyBudget: 0 }, 'INVALID_INPUT', 'input.dailyBudget'],
      [{ subscription: ROUNDS, variables: { round: 5 } }, 'INVALID_INPUT', 'input.variables'],
    ];
    for (const [input, code, named] of cases) {
      const made = await stack.gql(CREATE, { input: { url: receiver.url, ...input } });
      expect(made.errors?.[0]?.extensions?.code, JSON.stringify(input)).toBe(code);
      expect(made.errors?.[0]?.message).toContain(named);
    }
    const listed = await stack.gql(`{ alerts { edges { node { id } } } }`);
    expect(listed.data.alerts.edges).toEqual([]);
    for (const args of ['first: 0', 'first: 101', 'after: "garbage"']) {
      const paged = await stack.gql(`{ alerts(${args}) { edges { node { id } } } }`);
      expect(paged.errors?.[0]?.extensions?.code, args).toBe('INVALID_INPUT');
    }
  });

  it('waits when its daily budget is spent, and says so; nothing is lost', async () => {
    const { id } = await create(stack, {
      subscription: ROUNDS,
      variables: { round: ['series_e'] },
      dailyBudget: 2,
    });
    await polled(1);
    stack.sandbox.addEvents({ kind: 'fundingEvent', round: 'series_e', count: 4 });
    await eventually(
      async () => (await stack.gql(ALERT, { id })).data.alert.reason !== null,
      15_000,
      'a reason',
    );
    const seen = await stack.gql(ALERT, { id });
    expect(seen.data.alert.status).toBe('WAITING');
    expect(seen.data.alert.reason).toMatch(/daily budget/);
    expect(seen.data.alert.spentToday).toBeLessThanOrEqual(2);
    expect(receiver.received.length).toBeLessThanOrEqual(2);
  });

  it('reports deliveries in the metrics', async () => {
    await create(stack, { subscription: ROUNDS, variables: { round: ['series_f'] } });
    await polled(1);
    stack.sandbox.addEvents({ kind: 'fundingEvent', round: 'series_f', count: 1 });
    await eventually(() => receiver.acknowledged().length === 1, 15_000, 'the delivery');
    const metrics = parseMetrics(await (await fetch(`${stack.origin}/metrics`)).text());
    expect(
      valueOf(metrics, 'gateway_alert_deliveries_total', { outcome: 'delivered' }),
    ).toBeGreaterThanOrEqual(1);
    expect(valueOf(metrics, 'gateway_alert_delivery_seconds_count')).toBeGreaterThanOrEqual(1);
  });
});

describe('alerts bounds and targets', () => {
  let strict: Gateway;
  beforeAll(async () => {
    // ALERT_PRIVATE_TARGETS=off (the default in front of a real service) and two alerts at most.
    strict = await startGateway(stack.sandbox, {
      config: { ...SETTINGS, alertPrivateTargets: 'off', alertsMaxPerPrincipal: 2 },
    });
  });
  afterAll(() => strict.close());

  it('refuses loopback, private, link-local, metadata and http targets', async () => {
    for (const url of [
      'https://127.0.0.1/hook',
      'https://localhost/hook',
      'https://10.1.2.3/hook',
      'https://192.168.0.1/hook',
      'https://169.254.169.254/latest/meta-data',
      'https://[::1]/hook',
      'https://[fd00::1]/hook',
      'http://example.com/hook',
    ]) {
      const made = await strict.gql(CREATE, { input: { subscription: ROUNDS, url } });
      expect(made.errors?.[0]?.extensions?.code, url).toBe('INVALID_INPUT');
      expect(made.errors?.[0]?.message, url).toContain('input.url');
    }
  });

  it('bounds the alerts of one principal', async () => {
    const key = OTHER_KEY;
    // Public-looking targets pass creation's check only when they resolve: use a literal address.
    const input = { subscription: ROUNDS, url: 'https://93.184.215.14/hook' };
    try {
      for (let i = 0; i < 2; i++) {
        const made = await strict.gql(CREATE, { input }, { key });
        expect(made.errors).toBeUndefined();
      }
      const third = await strict.gql(CREATE, { input }, { key });
      expect(third.errors?.[0]?.extensions).toMatchObject({
        code: 'TOO_MANY_SUBSCRIPTIONS',
        scope: 'alerts',
      });
    } finally {
      await deleteAll(strict, key);
    }
  });
});

describe('alerts that fail, and alerts that wait', () => {
  let strict: Gateway;
  const key = 'alerts-quota-key';
  beforeAll(async () => {
    // ALERT_DISABLE_AFTER=2 and ALERT_RETRY_SECONDS=1 (defaults 20 and a day): two deliveries
    // given up in a second disable their alert. CREDIT_QUOTA=3/minute: the owner's quota ends a
    // run after three records.
    stack.sandbox.addKey(key, { credits: 1e9 });
    strict = await startGateway(stack.sandbox, {
      config: {
        ...SETTINGS,
        alertDisableAfter: 2,
        alertRetrySeconds: 1,
        creditQuota: parseCreditQuota('3/minute'),
      },
    });
  });
  afterAll(() => strict.close());

  it('disables an alert after deliveries given up in a row, says why, and sends one again on demand', async () => {
    const { id } = await create(
      strict,
      { subscription: ROUNDS, variables: { round: ['series_g'] } },
      key,
    );
    await polled(1);
    receiver.always(500);
    stack.sandbox.addEvents({ kind: 'fundingEvent', round: 'series_g', count: 2 });
    await eventually(
      async () => (await strict.gql(ALERT, { id }, { key })).data.alert.status === 'DISABLED',
      20_000,
      'disabled',
    );
    const seen = await strict.gql(ALERT, { id }, { key });
    expect(seen.data.alert.reason).toMatch(/2 deliveries in a row were given up/);
    const deliveries = seen.data.alert.deliveries.edges.map((edge: any) => edge.node);
    expect(deliveries.every((d: any) => d.status === 'FAILED' && d.lastHttpStatus === 500)).toBe(
      true,
    );
    // Resumed, and one delivery sent again: the same webhook-id, acknowledged now.
    receiver.always(200);
    await strict.gql(`mutation($id: ID!) { resumeAlert(id: $id) { status } }`, { id }, { key });
    const again = await strict.gql(
      `mutation($id: ID!) { redeliverAlertDelivery(id: $id) { id status } }`,
      { id: deliveries[0].id },
      { key },
    );
    expect(again.data.redeliverAlertDelivery).toEqual({ id: deliveries[0].id, status: 'PENDING' });
    await eventually(
      () => receiver.acknowledged().includes(deliveries[0].id),
      10_000,
      'redelivered',
    );
    // Another caller cannot send it again.
    const foreign = await strict.gql(
      `mutation($id: ID!) { redeliverAlertDelivery(id: $id) { id } }`,
      { id: deliveries[0].id },
    );
    expect(foreign.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    await deleteAll(strict, key);
  }, 40_000);

  it("waits when its owner's quota is spent, and says so", async () => {
    const { id } = await create(
      strict,
      { subscription: ROUNDS, variables: { round: ['series_h'] } },
      OTHER_KEY,
    );
    await polled(1);
    stack.sandbox.addEvents({ kind: 'fundingEvent', round: 'series_h', count: 5 });
    await eventually(
      async () => (await strict.gql(ALERT, { id }, { key: OTHER_KEY })).data.alert.reason !== null,
      15_000,
      'a reason',
    );
    const seen = await strict.gql(ALERT, { id }, { key: OTHER_KEY });
    expect(seen.data.alert.status).toBe('WAITING');
    expect(seen.data.alert.reason).toMatch(/quota/);
    expect(seen.data.alert.deliveries.edges.length).toBeLessThanOrEqual(3);
    await deleteAll(strict, OTHER_KEY);
  });
});

/** The binding the gateway's processes open their file with here, without the preload below. */
const THIS_NODE_BINDING = (() => {
  const { database, binding } = openSqlite(':memory:');
  database.close();
  return binding;
})();

/** Node 20 where better-sqlite3 could not be installed: SQLite's WebAssembly build. */
const WASM_SQLITE = {
  NODE_OPTIONS: `--require ${fileURLToPath(new URL('../helpers/without-native-sqlite.cjs', import.meta.url))}`,
};

describe.each([
  ['the SQLite binding this Node loads', {}],
  ["SQLite's WebAssembly build (no better-sqlite3, no node:sqlite)", WASM_SQLITE],
] as const)('alerts in processes, %s', (_binding, bindingEnv) => {
  /**
   * The log names the WebAssembly build when, and only when, it is the one in use: with the
   * preload, or where no native binding loads at all (Node 20 without a built better-sqlite3).
   */
  function expectBinding(output: string) {
    expect(output.includes('SQLite through its WebAssembly build')).toBe(
      bindingEnv === WASM_SQLITE || THIS_NODE_BINDING === 'node-sqlite3-wasm',
    );
  }

  it('WORKERS=2 without Redis: each alert runs in one worker, each record delivered once', async () => {
    const first = Date.now();
    const gateway = await startGatewayProcess({
      UPSTREAM_URL: stack.sandbox.url,
      WORKERS: '2',
      ALERT_PRIVATE_TARGETS: 'on',
      POLL_INTERVAL_SECONDS: '1',
      ...bindingEnv,
    });
    try {
      const made = await fetch(gateway.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': stack.sandbox.keys.demo },
        body: JSON.stringify({
          query: CREATE,
          variables: {
            input: { url: receiver.url, subscription: ROUNDS, variables: { round: ['pre_seed'] } },
          },
        }),
      }).then((response) => response.json() as Promise<any>);
      expect(made.errors).toBeUndefined();
      const roundPolls = () =>
        stack.sandbox
          .requestLog()
          .filter((e) => e.at >= first && String(e.params['round']) === 'pre_seed');
      await eventually(() => roundPolls().length >= 1, 10_000, 'a poll');
      // Both workers have swept (every 2 s) after four seconds: one poll a second, not two.
      await new Promise((resolve) => setTimeout(resolve, 4_000));
      const seconds = (Date.now() - roundPolls()[0]!.at) / 1000;
      expect(roundPolls().length).toBeLessThanOrEqual(Math.ceil(seconds) + 1);
      const before = Date.now();
      const added = stack.sandbox.addEvents({ kind: 'fundingEvent', round: 'pre_seed', count: 3 });
      await eventually(() => receiver.acknowledged().length >= 3, 15_000, 'three deliveries');
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      expect(receiver.acknowledged()).toHaveLength(3);
      const delivered = receiver.received.map(
        (r) => (JSON.parse(r.body) as any).data.fundingEventAdded.uuid as string,
      );
      expect(delivered.sort()).toEqual(added.map((event) => event.id).sort());
      // Paid once: one poll found them.
      const charged = roundPolls()
        .filter((e) => e.at >= before)
        .reduce((sum, e) => sum + e.records, 0);
      expect(charged).toBe(3);
      expectBinding(gateway.output());
    } finally {
      gateway.child.kill('SIGKILL');
      await gateway.exited;
    }
  }, 60_000);

  it('delivers every pending delivery after SIGKILL and a restart, with the same webhook-ids', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gateway-alerts-crash-'));
    const env = {
      UPSTREAM_URL: stack.sandbox.url,
      ALERTS_DATA_DIR: dataDir,
      ALERT_PRIVATE_TARGETS: 'on',
      POLL_INTERVAL_SECONDS: '1',
      ALERT_RETRY_BASE_MS: '200',
      ...bindingEnv,
    };
    const first = await startGatewayProcess(env);
    const made = await fetch(first.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': stack.sandbox.keys.demo },
      body: JSON.stringify({
        query: CREATE,
        variables: {
          input: { url: receiver.url, subscription: ROUNDS, variables: { round: ['ipo'] } },
        },
      }),
    }).then((response) => response.json() as Promise<any>);
    expect(made.errors).toBeUndefined();
    const secret = made.data.createAlert.secret as string;
    await polled(1);
    // The receiver fails everything: deliveries pile up, pending.
    receiver.always(503);
    const added = stack.sandbox.addEvents({ kind: 'fundingEvent', round: 'ipo', count: 5 });
    await eventually(() => receiver.received.length >= 5, 15_000, 'five attempts');
    first.child.kill('SIGKILL');
    await first.exited;
    // More events while it is down: found on its return, from its watermark.
    const later = stack.sandbox.addEvents({ kind: 'fundingEvent', round: 'ipo', count: 2 });
    receiver.always(200);
    const second = await startGatewayProcess(env);
    try {
      await eventually(
        () => new Set(receiver.acknowledged()).size >= 7,
        30_000,
        'seven deliveries acknowledged',
      );
      const delivered = receiver.received
        .filter((received) => received.status === 200)
        .map((received) => verify(secret, received).data.fundingEventAdded.uuid);
      expect(new Set(delivered)).toEqual(new Set([...added, ...later].map((event) => event.id)));
      // The ids acknowledged are those tried before the crash, for the first five.
      const triedBefore = new Set(
        receiver.received
          .filter((r) => r.status === 503)
          .map((r) => String(r.headers['webhook-id'])),
      );
      expect(triedBefore.size).toBe(5);
      for (const id of triedBefore) expect(receiver.acknowledged()).toContain(id);
      expectBinding(second.output());
    } finally {
      second.child.kill('SIGKILL');
      await second.exited;
    }
  }, 90_000);
});
