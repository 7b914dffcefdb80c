import { createClient } from 'graphql-ws';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { CLOCK_TOLERANCE_SECONDS } from '../../src/auth/verify-token.js';
import {
  AUDIENCE,
  ISSUER,
  sign,
  startIdentityProvider,
  type IdentityProvider,
  type SigningKey,
} from '../helpers/identity-provider.js';
import { startStack, type Stack } from '../helpers/start-stack.js';
import { eventually, subscribeSse, subscribeWs, type Subscribed } from '../helpers/subscribe.js';

/** The service's key of the one workspace, held by the gateway. */
const ACME_KEY = 'acme-expiry-key';

const ROUNDS = `subscription Rounds($round: [String!]) {
  fundingEventAdded(round: $round) { uuid round }
}`;

let idp: IdentityProvider;
let k1: SigningKey;
let stack: Stack;
let acme: string;
const open: Subscribed[] = [];
const clients: { dispose(): unknown }[] = [];

beforeAll(async () => {
  idp = await startIdentityProvider();
  k1 = await idp.addKey('k1');
  // AUTH_MODE=jwt over the test's identity provider (default: api-key); POLL_INTERVAL_SECONDS=1
  // (default 30) so that a test sees several polls within a token's few seconds of life.
  stack = await startStack({
    config: {
      authMode: 'jwt',
      jwtJwksUrl: idp.jwksUrl,
      jwtIssuer: ISSUER,
      jwtAudience: AUDIENCE,
      upstreamKeys: new Map([['acme', ACME_KEY]]),
      pollIntervalSeconds: 1,
    },
  });
  acme = stack.sandbox.addKey(ACME_KEY, { credits: 1e9 });
});
afterAll(async () => {
  await stack?.close();
  await idp?.close();
});
afterEach(async () => {
  for (const subscription of open.splice(0)) subscription.leave();
  for (const client of clients.splice(0)) await client.dispose();
});

/** A token of alice at acme that expires `seconds` from now, and when the gateway refuses it. */
async function shortToken(seconds: number) {
  const exp = Math.floor(Date.now() / 1000) + seconds;
  const token = await sign(k1, { claims: { workspace: 'acme' }, exp });
  return { token, refusedFrom: (exp + CLOCK_TOLERANCE_SECONDS) * 1000 };
}

/** The polls of `round` the sandbox received, with when. */
const polls = (round: string) =>
  stack.sandbox
    .requestLog()
    .filter(
      (entry) =>
        entry.workspace === acme &&
        entry.endpoint === '/v1/funding-events' &&
        entry.params['round']?.[0] === round,
    );

/** A graphql-ws client with `token`, recording the codes its sockets were closed with. */
function client(token: string) {
  const closes: number[] = [];
  const ws = createClient({
    url: stack.url.replace(/^http/, 'ws'),
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${token}` },
    retryAttempts: 0,
    lazy: true,
    on: { closed: (event) => closes.push((event as { code: number }).code) },
  });
  clients.push(ws);
  return { ws, closes };
}

const lastCode = (subscription: Subscribed) =>
  subscription.payloads.at(-1)?.errors?.[0]?.extensions?.['code'];

describe('a WebSocket connection lives no longer than its token', () => {
  it('ends its subscriptions with UNAUTHENTICATED at expiry, polls nothing more for them, closes 4401', async () => {
    const { token, refusedFrom } = await shortToken(1);
    const { ws, closes } = client(token);
    const subscription = subscribeWs(ws, ROUNDS, { round: ['series_x'] });
    open.push(subscription);
    await eventually(() => polls('series_x').length > 0, 5_000, 'a first poll');
    stack.sandbox.addEvents({ kind: 'fundingEvent', round: 'series_x', count: 2 });
    await subscription.next(2);

    await subscription.ended;
    expect(Date.now()).toBeGreaterThanOrEqual(refusedFrom);
    expect(subscription.payloads).toHaveLength(3);
    expect(lastCode(subscription)).toBe('UNAUTHENTICATED');
    await eventually(() => closes.includes(4401), 3_000, 'the socket closed with 4401');

    // Nothing more is sent on its behalf: its poller had it alone, and stopped.
    const sent = polls('series_x').length;
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(polls('series_x').length).toBe(sent);
    expect(polls('series_x').every((entry) => entry.at < refusedFrom + 1_000)).toBe(true);

    // A query sent with the same token afterwards is refused: the socket it opens is closed 4401.
    const late = subscribeWs(ws, '{ companies(first: 1) { nodes { id } } }');
    await late.ended;
    expect(late.payloads).toHaveLength(0);
    expect(closes.filter((code) => code === 4401).length).toBeGreaterThanOrEqual(2);
  });

  it('a client that connects again with a new token carries on', async () => {
    const { token } = await shortToken(1);
    const first = client(token);
    const before = subscribeWs(first.ws, ROUNDS, { round: ['series_y'] });
    open.push(before);
    await before.ended;
    expect(lastCode(before)).toBe('UNAUTHENTICATED');

    const renewed = client(await sign(k1, { claims: { workspace: 'acme' } }));
    const subscribed = Date.now();
    const after = subscribeWs(renewed.ws, ROUNDS, { round: ['series_y'] });
    open.push(after);
    // Its own poller polled (from the moment it started), so an event added now is new to it.
    await eventually(
      () => polls('series_y').some((entry) => Date.parse(entry.params['since']![0]!) >= subscribed),
      5_000,
      'the new subscription polled',
    );
    stack.sandbox.addEvents({ kind: 'fundingEvent', round: 'series_y' });
    const [payload] = await after.next(1);
    expect(payload?.data?.['fundingEventAdded'].round).toBe('series_y');
  });
});

describe('an SSE subscription lives no longer than its token', () => {
  it('ends with UNAUTHENTICATED at expiry, and nothing more is polled for it', async () => {
    const { token, refusedFrom } = await shortToken(1);
    const subscription = subscribeSse(
      stack.url,
      ROUNDS,
      { authorization: `Bearer ${token}` },
      { round: ['series_z'] },
    );
    open.push(subscription);
    await subscription.ended;
    expect(Date.now()).toBeGreaterThanOrEqual(refusedFrom);
    expect(lastCode(subscription)).toBe('UNAUTHENTICATED');
    expect(polls('series_z').length).toBeGreaterThan(0);
    const sent = polls('series_z').length;
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(polls('series_z').length).toBe(sent);
  });

  it('the same token over HTTP is refused from that moment too', async () => {
    const { token, refusedFrom } = await shortToken(0);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, refusedFrom - Date.now())));
    const response = await fetch(stack.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(response.status).toBe(401);
  });
});
