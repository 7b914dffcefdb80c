import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startRedis, type RedisServer } from '../helpers/start-redis.js';
import { startGateway, startStack, type Gateway, type Stack } from '../helpers/start-stack.js';
import { eventually } from '../helpers/subscribe.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

// REDIS_URL names the suite's own Redis: alerts and their delivery queue live there, shared by two
// instances. POLL_INTERVAL_SECONDS=1 and ALERT_RETRY_BASE_MS=100 (defaults 30 s) so that polls and
// retries fit in a test. Every other setting is the default.
const ROUNDS = `subscription Rounds($round: [String!]) {
  fundingEventAdded(round: $round) { uuid round }
}`;

const CREATE = `mutation Create($input: CreateAlertInput!) {
  createAlert(input: $input) { secret alert { id } }
}`;

const ALERT = `query One($id: ID!) {
  alert(id: $id) { status deliveries(first: 50) { edges { node { id status attempts } } } }
}`;

describe('alerts on two instances sharing one Redis', () => {
  let redis: RedisServer;
  let stack: Stack;
  let second: Gateway;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    redis = await startRedis();
    const config = { pollIntervalSeconds: 1, alertRetryBaseMs: 100, redisUrl: redis.url };
    stack = await startStack({ config });
    second = await startGateway(stack.sandbox, { config });
  });
  afterAll(async () => {
    await second?.close();
    await stack?.close();
    await redis?.stop();
  });
  beforeEach(async () => {
    await receiver?.close();
    receiver = await startWebhookReceiver();
  });

  const polls = (from: number) =>
    stack.sandbox
      .requestLog()
      .filter((e) => e.endpoint === '/v1/funding-events' && e.params['since'] && e.at >= from);

  it('an alert made on one instance is seen and managed on the other', async () => {
    const made = await stack.gql(CREATE, {
      input: { url: receiver.url, subscription: ROUNDS, variables: { round: ['seed'] } },
    });
    expect(made.errors).toBeUndefined();
    const id = made.data.createAlert.alert.id as string;
    const seen = await second.gql(ALERT, { id });
    expect(seen.data.alert.status).toBe('ACTIVE');
    const paused = await second.gql(`mutation($id: ID!) { pauseAlert(id: $id) { status } }`, {
      id,
    });
    expect(paused.data.pauseAlert.status).toBe('PAUSED');
    expect((await stack.gql(ALERT, { id })).data.alert.status).toBe('PAUSED');
    expect((await second.gql(`mutation($id: ID!) { deleteAlert(id: $id) }`, { id })).data).toEqual({
      deleteAlert: true,
    });
    expect((await stack.gql(ALERT, { id })).data.alert).toBeNull();
  });

  it('delivers each event once across both instances, through failures, paying once', async () => {
    const made = [];
    const from = Date.now();
    for (const gateway of [stack, second, stack]) {
      const answer = await gateway.gql(CREATE, {
        input: { url: receiver.url, subscription: ROUNDS, variables: { round: ['series_a'] } },
      });
      expect(answer.errors).toBeUndefined();
      made.push(answer.data.createAlert.alert.id as string);
    }
    // Each alert's first fetch from its creation (a catch-up), then two polls. An event that
    // came before a catch-up ran would be paid by it and by the next poll: see issue 37's note.
    await eventually(() => polls(from).length >= 5, 10_000, 'three catch-ups and two polls');
    const before = stack.sandbox.requestLog().length;
    // The first twelve attempts fail: the retries go through the shared queue too.
    receiver.answer(...Array.from({ length: 12 }, () => 500));
    const added = stack.sandbox.addEvents({ kind: 'fundingEvent', round: 'series_a', count: 4 });
    await eventually(
      () => new Set(receiver.acknowledged()).size >= 12,
      30_000,
      'twelve deliveries acknowledged',
    );
    // A moment more: a second sender of any delivery would show now.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const acknowledged = receiver.acknowledged();
    expect(acknowledged).toHaveLength(12);
    expect(new Set(acknowledged).size).toBe(12);
    const uuids = receiver.received
      .filter((r) => r.status === 200)
      .map((r) => (JSON.parse(r.body) as any).data.fundingEventAdded.uuid as string);
    for (const event of added) expect(uuids.filter((uuid) => uuid === event.id)).toHaveLength(3);
    const charged = stack.sandbox
      .requestLog()
      .slice(before)
      .reduce((sum, entry) => sum + entry.records, 0);
    expect(
      charged,
      JSON.stringify(
        stack.sandbox
          .requestLog()
          .slice(before)
          .filter((e) => e.records > 0),
      ),
    ).toBe(added.length);
    for (const id of made) {
      const seen = await second.gql(ALERT, { id });
      const deliveries = seen.data.alert.deliveries.edges.map((e: any) => e.node);
      expect(deliveries).toHaveLength(4);
      expect(deliveries.every((d: any) => d.status === 'DELIVERED')).toBe(true);
    }
  }, 60_000);

  it('loses no event while Redis hangs (SIGSTOP): each is delivered once it answers again', async () => {
    const answer = await stack.gql(CREATE, {
      input: { url: receiver.url, subscription: ROUNDS, variables: { round: ['series_b'] } },
    });
    expect(answer.errors).toBeUndefined();
    const from = Date.now();
    await eventually(() => polls(from).length >= 2, 10_000, 'two polls');
    redis.pause();
    let added;
    try {
      added = stack.sandbox.addEvents({ kind: 'fundingEvent', round: 'series_b', count: 3 });
      await new Promise((resolve) => setTimeout(resolve, 3_000));
    } finally {
      redis.resume();
    }
    await eventually(
      () => new Set(receiver.acknowledged()).size >= 3,
      30_000,
      'three deliveries acknowledged',
    );
    const uuids = receiver.received
      .filter((r) => r.status === 200)
      .map((r) => (JSON.parse(r.body) as any).data.fundingEventAdded.uuid as string);
    expect(new Set(uuids)).toEqual(new Set(added.map((event) => event.id)));
  }, 60_000);
});
