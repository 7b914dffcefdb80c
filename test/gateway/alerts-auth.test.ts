import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config.js';
import {
  jwtSettings,
  sign,
  startIdentityProvider,
  type IdentityProvider,
  type SigningKey,
} from '../helpers/identity-provider.js';
import { startStack, type Stack } from '../helpers/start-stack.js';
import { eventually, wsClient } from '../helpers/subscribe.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

// AUTH_MODE=jwt over the test's identity provider, a service key per workspace on the server
// (the JWKS cooldown 0, as in jwt-auth.test.ts); POLL_INTERVAL_SECONDS=1 (default 30) so that
// deliveries come within a test. Every other setting is the default.
const ACME_KEY = 'alerts-acme-key';
const GLOBEX_KEY = 'alerts-globex-key';

const CREATE = `mutation Create($input: CreateAlertInput!) {
  createAlert(input: $input) { secret alert { id } }
}`;
const ROUNDS = 'subscription { fundingEventAdded(round: ["series_a"]) { uuid } }';

let idp: IdentityProvider;
let k1: SigningKey;
let stack: Stack;
let receiver: WebhookReceiver;
let acme: string;

function jwtConfig(): Partial<Config> {
  return {
    ...jwtSettings(idp),
    upstreamKeys: new Map([
      ['acme', ACME_KEY],
      ['globex', GLOBEX_KEY],
    ]),
    pollIntervalSeconds: 1,
  };
}

beforeAll(async () => {
  idp = await startIdentityProvider();
  k1 = await idp.addKey('k1');
  stack = await startStack({ config: jwtConfig() });
  acme = stack.sandbox.addKey(ACME_KEY, { credits: 1e9 });
  stack.sandbox.addKey(GLOBEX_KEY, { credits: 1e9 });
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await stack?.close();
  await idp?.close();
});
beforeEach(() => stack.sandbox.reset());

async function post(query: string, variables: Record<string, unknown>, token: string | null) {
  const response = await fetch(stack.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify({ query, variables }),
  });
  return (await response.json()) as {
    data?: any;
    errors?: { message: string; extensions?: Record<string, unknown> }[];
  };
}

const tokenOf = (sub: string, workspace: string, exp: string | number = '10m') =>
  sign(k1, { sub, claims: { workspace }, exp });

describe('alerts with AUTH_MODE=jwt', () => {
  it("are their workspace's and subject's: another user, or another workspace, finds none", async () => {
    const alice = await tokenOf('alice', 'acme');
    const made = await post(CREATE, { input: { url: receiver.url, subscription: ROUNDS } }, alice);
    expect(made.errors).toBeUndefined();
    const id = made.data.createAlert.alert.id as string;
    const one = `query($id: ID!) { alert(id: $id) { id } }`;
    expect((await post(one, { id }, alice)).data.alert).toEqual({ id });
    for (const other of [await tokenOf('bob', 'acme'), await tokenOf('alice', 'globex')]) {
      expect((await post(one, { id }, other)).data.alert).toBeNull();
      const deleted = await post(`mutation($id: ID!) { deleteAlert(id: $id) }`, { id }, other);
      expect(deleted.errors?.[0]?.extensions?.['code']).toBe('NOT_FOUND');
    }
    // No token: refused as every operation is in this mode.
    const anonymous = await post(one, { id }, null);
    expect(anonymous.errors?.[0]?.extensions?.['code']).toBe('UNAUTHENTICATED');
    await post(`mutation($id: ID!) { deleteAlert(id: $id) }`, { id }, alice);
  });

  it("runs with its workspace's key from the server after its maker's token expired", async () => {
    // A token that lives three seconds: the alert outlives it.
    const brief = await tokenOf('carol', 'acme', Math.floor(Date.now() / 1000) + 3);
    const made = await post(CREATE, { input: { url: receiver.url, subscription: ROUNDS } }, brief);
    expect(made.errors).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, 3_500));
    const from = receiver.received.length;
    const [event] = stack.sandbox.addEvents({ kind: 'fundingEvent', round: 'series_a', count: 1 });
    await eventually(
      () =>
        receiver.received.slice(from).some((r) => r.status === 200 && r.body.includes(event!.id)),
      15_000,
      'the delivery',
    );
    const polls = stack.sandbox.requestLog().filter((entry) => entry.params['since']);
    expect(polls.length).toBeGreaterThan(0);
    expect(new Set(polls.map((entry) => entry.workspace))).toEqual(new Set([acme]));
    const id = made.data.createAlert.alert.id as string;
    const token = await tokenOf('carol', 'acme');
    await post(`mutation($id: ID!) { deleteAlert(id: $id) }`, { id }, token);
  });

  it('are made and listed over WebSocket too, under the same rules', async () => {
    const token = await tokenOf('dave', 'acme');
    const client = wsClient(stack.url, { authorization: `Bearer ${token}` });
    try {
      const run = (query: string, variables: Record<string, unknown>) =>
        new Promise<any>((resolve, reject) => {
          let result: unknown;
          client.subscribe(
            { query, variables },
            { next: (value) => (result = value), error: reject, complete: () => resolve(result) },
          );
        });
      const made = await run(CREATE, { input: { url: receiver.url, subscription: ROUNDS } });
      expect(made.errors).toBeUndefined();
      const id = made.data.createAlert.alert.id as string;
      const listed = await run(`{ alerts { edges { node { id } } } }`, {});
      expect(listed.data.alerts.edges).toEqual([{ node: { id } }]);
      // The same bad input is refused the same way as over HTTP.
      const bad = await run(CREATE, { input: { url: 'ftp://x', subscription: ROUNDS } });
      expect(bad.errors?.[0]?.extensions?.code).toBe('INVALID_INPUT');
      await run(`mutation($id: ID!) { deleteAlert(id: $id) }`, { id });
    } finally {
      await client.dispose();
    }
  });
});
