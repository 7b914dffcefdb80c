import { createPublicKey } from 'node:crypto';
import { exportSPKI, SignJWT } from 'jose';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Config } from '../../src/config.js';
import { freePort } from '../helpers/start-process.js';
import {
  AUDIENCE,
  ISSUER,
  jwtSettings,
  makeKey,
  sign,
  startIdentityProvider,
  type IdentityProvider,
  type JwksMode,
  type SigningKey,
} from '../helpers/identity-provider.js';
import {
  NO_CACHE,
  spentOn,
  startGateway,
  startStack,
  type Gateway,
  type Stack,
} from '../helpers/start-stack.js';

/** The service's keys of two workspaces, held by the gateway, never by a browser. */
const ACME_KEY = 'acme-server-key';
const GLOBEX_KEY = 'globex-server-key';

/** What a client gets back: status, headers and the GraphQL body. */
interface Answer {
  status: number;
  headers: Headers;
  body: {
    data?: any;
    errors?: { message: string; extensions?: Record<string, any> }[];
    extensions?: Record<string, any>;
  };
}

/** POSTs `query` to `url` with `token` as a bearer token (none when null), and `headers`. */
async function post(
  url: string,
  query: string,
  token: string | null,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/graphql-response+json, application/json',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...headers,
    },
    body: JSON.stringify({ query }),
  });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

/** base64url of a JSON value, as a JWT segment. */
const segment = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

const now = () => Math.floor(Date.now() / 1000);

/** Fields the sandbox charges for: a list of `first` funding rounds. */
const rounds = (first: number) => `{ fundingEvents(first: ${first}) { nodes { uuid round } } }`;

let idp: IdentityProvider;
let k1: SigningKey;
let stack: Stack;
/** The sandbox's workspace ids of ACME_KEY and GLOBEX_KEY. */
let acme: string;
let globex: string;

/**
 * AUTH_MODE=jwt over the test's identity provider, a key per workspace. The JWKS cooldown is 0
 * (its default, 30 s, outlasts the suite) so that a key added after the first fetch is fetched at
 * once.
 */
function jwtConfig(): Partial<Config> {
  return {
    ...jwtSettings(idp),
    upstreamKeys: new Map([
      ['acme', ACME_KEY],
      ['globex', GLOBEX_KEY],
    ]),
  };
}

beforeAll(async () => {
  idp = await startIdentityProvider();
  k1 = await idp.addKey('k1');
  stack = await startStack({ config: jwtConfig() });
  acme = stack.sandbox.addKey(ACME_KEY, { credits: 1e9 });
  globex = stack.sandbox.addKey(GLOBEX_KEY, { credits: 1e9 });
});
afterAll(async () => {
  await stack?.close();
  await idp?.close();
});
beforeEach(() => stack.sandbox.reset());

/** A token of `sub` in `workspace`, signed with k1. */
const tokenOf = (sub: string, workspace: string) => sign(k1, { sub, claims: { workspace } });

describe('AUTH_MODE=jwt: a valid token', () => {
  it("runs the operation with its workspace's key from the server; a client's X-API-Key is never forwarded", async () => {
    const answer = await post(stack.url, rounds(3), await tokenOf('alice', 'acme'), {
      'x-api-key': stack.sandbox.keys.demo,
      ...NO_CACHE,
    });
    expect(answer.status).toBe(200);
    expect(answer.body.errors).toBeUndefined();
    expect(answer.body.data.fundingEvents.nodes).toHaveLength(3);
    const log = stack.sandbox.requestLog();
    expect(log.length).toBeGreaterThan(0);
    expect(log.map((entry) => entry.workspace)).toEqual(log.map(() => acme));
  });

  it('/subgraph follows the same mode: 401 without a token, the operation with one', async () => {
    const subgraph = `${stack.origin}/subgraph`;
    const refused = await post(subgraph, rounds(2), null, {
      'x-api-key': stack.sandbox.keys.demo,
    });
    expect(refused.status).toBe(401);
    expect(refused.body.errors?.[0]?.extensions?.['code']).toBe('UNAUTHENTICATED');
    expect(spentOn(stack.sandbox).requests).toBe(0);

    const answer = await post(subgraph, rounds(2), await tokenOf('alice', 'globex'), NO_CACHE);
    expect(answer.status).toBe(200);
    expect(answer.body.data.fundingEvents.nodes).toHaveLength(2);
    expect(stack.sandbox.requestLog().map((entry) => entry.workspace)).toEqual([globex]);
  });

  it('two users of one workspace share a cached page: the second pays nothing', async () => {
    const first = await post(stack.url, rounds(7), await tokenOf('alice', 'acme'));
    expect(first.body.extensions?.['credits']).toMatchObject({ used: 7 });
    stack.sandbox.reset();

    const second = await post(stack.url, rounds(7), await tokenOf('bob', 'acme'));
    expect(second.body.data).toEqual(first.body.data);
    expect(second.body.extensions?.['credits']).toMatchObject({ used: 0, saved: 7 });
    expect(spentOn(stack.sandbox)).toEqual({ requests: 0, credits: 0 });
  });

  it('two workspaces never share a page: each pays with its own key', async () => {
    await post(stack.url, rounds(8), await tokenOf('alice', 'acme'));
    stack.sandbox.reset();

    const other = await post(stack.url, rounds(8), await tokenOf('carol', 'globex'));
    expect(other.body.extensions?.['credits']).toMatchObject({ used: 8, saved: 0 });
    expect(spentOn(stack.sandbox)).toEqual({ requests: 1, credits: 8 });
    expect(stack.sandbox.requestLog()[0]!.workspace).toBe(globex);
  });

  it('a key added to the JWKS after the first fetch (rotation) is picked up', async () => {
    expect((await post(stack.url, rounds(1), await tokenOf('alice', 'acme'))).status).toBe(200);
    const fetched = idp.fetches();
    expect(fetched).toBeGreaterThan(0);

    const k2 = await idp.addKey('k2', 'ES256');
    const rotated = await sign(k2, { claims: { workspace: 'acme' } });
    const answer = await post(stack.url, rounds(1), rotated);
    expect(answer.status).toBe(200);
    expect(answer.body.errors).toBeUndefined();
    expect(idp.fetches()).toBe(fetched + 1);
  });
});

describe('AUTH_MODE=jwt: the JWKS and verified tokens are shared', () => {
  let gateway: Gateway;
  afterAll(() => gateway?.close());

  it('a fresh gateway fetches the JWKS once for many tokens at once, on both endpoints', async () => {
    gateway = await startGateway(stack.sandbox, { config: jwtConfig() });
    const before = idp.fetches();
    const tokens = await Promise.all(
      ['u1', 'u2', 'u3', 'u4', 'u5'].map((sub) => tokenOf(sub, 'acme')),
    );
    const answers = await Promise.all([
      ...tokens.map((token) => post(gateway.url, rounds(1), token)),
      post(`${gateway.origin}/subgraph`, rounds(1), tokens[0]!),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(idp.fetches() - before).toBe(1);
  });
});

/** Every way a token can be wrong: how to make it, and the check its message names. */
const BAD_TOKENS: [string, () => Promise<string>, RegExp][] = [
  ['expired', () => sign(k1, { exp: now() - 60 }), /expired at .*"exp"/],
  ['not yet valid', () => sign(k1, { nbf: now() + 600 }), /not valid before .*"nbf"/],
  ['of another issuer', () => sign(k1, { iss: 'https://evil.test/' }), /issuer.*"iss"/],
  ['for another audience', () => sign(k1, { aud: 'another-api' }), /audience.*"aud"/],
  [
    'unsigned (alg: none)',
    async () =>
      `${segment({ alg: 'none', typ: 'JWT' })}.${segment({ sub: 'alice', iss: ISSUER, aud: AUDIENCE, exp: now() + 600, workspace: 'acme' })}.`,
    /algorithm \("alg"\) is not accepted: only RS256, ES256/,
  ],
  [
    "HS256, signed with the public key's bytes",
    async () =>
      new SignJWT({ workspace: 'acme' })
        .setProtectedHeader({ alg: 'HS256', kid: 'k1' })
        .setSubject('alice')
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setExpirationTime('10m')
        .sign(new TextEncoder().encode(await exportSPKI(k1.publicKey))),
    /algorithm \("alg"\) is not accepted/,
  ],
  [
    'with a tampered payload',
    async () => {
      const [header, , signature] = (await sign(k1, { claims: { workspace: 'acme' } })).split('.');
      const payload = { sub: 'admin', iss: ISSUER, aud: AUDIENCE, exp: now() + 600 };
      return `${header}.${segment({ ...payload, workspace: 'globex' })}.${signature}`;
    },
    /signature does not verify/,
  ],
  [
    'signed with a key the JWKS lacks (unknown kid)',
    async () => sign(await makeKey('stranger'), { claims: { workspace: 'acme' } }),
    /No key .* matches the token's key id \("kid"\)/,
  ],
  ['without exp', () => sign(k1, { exp: null }), /no "exp" claim/],
  ['not a JWT', async () => 'not-a-jwt', /not a well-formed signed JWT/],
];

describe('AUTH_MODE=jwt: a request without a valid token is refused, and nothing is sent upstream', () => {
  it.each(BAD_TOKENS)(
    'a token %s: 401 UNAUTHENTICATED, WWW-Authenticate: Bearer error="invalid_token"',
    async (_what, make, reason) => {
      const answer = await post(stack.url, rounds(2), await make(), NO_CACHE);
      expect(answer.status).toBe(401);
      expect(answer.headers.get('www-authenticate')).toMatch(
        /^Bearer error="invalid_token", error_description="[^"]+"$/,
      );
      expect(answer.body.data).toBeUndefined();
      expect(answer.body.errors).toHaveLength(1);
      expect(answer.body.errors![0]!.extensions).toEqual({ code: 'UNAUTHENTICATED' });
      expect(answer.body.errors![0]!.message).toMatch(reason);
      expect(spentOn(stack.sandbox)).toEqual({ requests: 0, credits: 0 });
    },
  );

  it.each([
    ['no credentials at all', {}, /No token was sent/],
    [
      "only an X-API-Key (the service's own key)",
      { 'x-api-key': 'demo-key' },
      /does not take an X-API-Key/,
    ],
    ['another scheme (Basic)', { authorization: 'Basic YWxpY2U6cHc=' }, /not a bearer token/],
  ])(
    'a request with %s: 401 UNAUTHENTICATED, WWW-Authenticate: Bearer',
    async (_what, headers, reason) => {
      const answer = await post(stack.url, rounds(2), null, { ...headers, ...NO_CACHE });
      expect(answer.status).toBe(401);
      expect(answer.headers.get('www-authenticate')).toBe('Bearer');
      expect(answer.body.errors![0]!.extensions).toEqual({ code: 'UNAUTHENTICATED' });
      expect(answer.body.errors![0]!.message).toMatch(reason);
      expect(spentOn(stack.sandbox)).toEqual({ requests: 0, credits: 0 });
    },
  );

  it('a web page can read WWW-Authenticate (CORS exposes it)', async () => {
    const answer = await post(stack.url, rounds(2), null, { origin: 'https://app.example.com' });
    expect(answer.status).toBe(401);
    expect(answer.headers.get('access-control-allow-origin')).toBe('*');
    expect(answer.headers.get('access-control-expose-headers')).toMatch(/WWW-Authenticate/);
  });

  it.each([
    ['a workspace with no key', { workspace: 'initech' }, /workspace .* has no API key/],
    ['no workspace claim', {}, /no "workspace" claim/],
  ])('a valid token of %s: 403 FORBIDDEN', async (_what, claims, reason) => {
    const answer = await post(stack.url, rounds(2), await sign(k1, { claims }), NO_CACHE);
    expect(answer.status).toBe(403);
    expect(answer.headers.get('www-authenticate')).toBeNull();
    expect(answer.body.errors![0]!.extensions).toEqual({ code: 'FORBIDDEN' });
    expect(answer.body.errors![0]!.message).toMatch(reason);
    expect(spentOn(stack.sandbox)).toEqual({ requests: 0, credits: 0 });
  });

  it("GraphiQL's page is served without a token, and not prefilled with the sandbox's demo key", async () => {
    const response = await fetch(stack.url, { headers: { accept: 'text/html' } });
    expect(response.status).toBe(200);
    const page = await response.text();
    expect(page.includes('X-Credit-Budget'), 'the headers GraphiQL opens with').toBe(true);
    expect(page.includes(stack.sandbox.keys.demo), 'the demo key in the page').toBe(false);
  });
});

describe('AUTH_MODE=jwt with one PEM key (JWT_PUBLIC_KEY) and one workspace (UPSTREAM_API_KEY)', () => {
  const SOLO_KEY = 'solo-server-key';
  let signer: SigningKey;
  let gateway: Gateway;
  let solo: string;
  beforeAll(async () => {
    signer = await makeKey('pem', 'ES256');
    solo = stack.sandbox.addKey(SOLO_KEY, { credits: 1e9 });
    gateway = await startGateway(stack.sandbox, {
      config: {
        // The one EC key of the PEM: only ES256 of JWT_ALGORITHMS' default can be verified.
        authMode: 'jwt',
        jwtPublicKey: createPublicKey(await exportSPKI(signer.publicKey)),
        jwtIssuer: ISSUER,
        jwtAudience: AUDIENCE,
        upstreamApiKey: SOLO_KEY,
      },
    });
  });
  afterAll(() => gateway?.close());

  it("a token it signed runs with the server's key, whatever workspace the token names", async () => {
    const token = await sign(signer, { claims: { workspace: 'acme' } });
    const answer = await post(gateway.url, rounds(2), token, NO_CACHE);
    expect(answer.status).toBe(200);
    expect(answer.body.data.fundingEvents.nodes).toHaveLength(2);
    expect(stack.sandbox.requestLog().map((entry) => entry.workspace)).toEqual([solo]);
  });

  it.each([
    ['signed with another EC key', () => makeKey('pem', 'ES256'), /signature does not verify/],
    ['signed with an RSA key (RS256)', () => makeKey('pem', 'RS256'), /only ES256\./],
  ])('a token %s: 401, nothing sent', async (_what, other, reason) => {
    const answer = await post(gateway.url, rounds(2), await sign(await other()), NO_CACHE);
    expect(answer.status).toBe(401);
    expect(answer.body.errors![0]!.message).toMatch(reason);
    expect(spentOn(stack.sandbox).requests).toBe(0);
  });
});

describe('the identity provider unreachable', () => {
  it('answers 503 AUTH_UNAVAILABLE with Retry-After, and sends nothing upstream', async () => {
    // The JWKS at a port nothing listens on: the token cannot be checked.
    const gateway = await startGateway(stack.sandbox, {
      config: { ...jwtConfig(), jwtJwksUrl: `http://127.0.0.1:${await freePort()}/jwks.json` },
    });
    try {
      stack.sandbox.reset();
      const answer = await post(gateway.url, rounds(1), await tokenOf('alice', 'acme'));
      expect(answer.status).toBe(503);
      expect(answer.headers.get('retry-after')).toBe('5');
      expect(answer.body.errors?.[0]).toMatchObject({
        message: expect.stringContaining('JWT_JWKS_URL'),
        extensions: { code: 'AUTH_UNAVAILABLE' },
      });
      expect(spentOn(stack.sandbox).requests).toBe(0);
    } finally {
      await gateway.close();
    }
  });
});

describe('the identity provider failing or hanging: asked at most once per JWT_JWKS_COOLDOWN_MS', () => {
  /**
   * JWT_JWKS_COOLDOWN_MS short (its default, 30 s, outlasts the suite), so that a test sees the
   * cooldown pass; long enough that the 20 requests a test sends while the IdP fails fit in one.
   */
  const COOLDOWN_MS = 1_500;
  let flaky: IdentityProvider;
  let f1: SigningKey;
  let gateway: Gateway;
  let users = 0;
  beforeEach(async () => {
    flaky = await startIdentityProvider();
    f1 = await flaky.addKey('f1');
    gateway = await startGateway(stack.sandbox, {
      config: { ...jwtConfig(), jwtJwksUrl: flaky.jwksUrl, jwtJwksCooldownMs: COOLDOWN_MS },
    });
  });
  afterEach(async () => {
    await gateway?.close();
    await flaky?.close();
  });

  /** `count` tokens of acme users never seen before (so never verified), signed with `key`. */
  const freshTokens = (count: number, key = f1) =>
    Promise.all(
      Array.from({ length: count }, () =>
        sign(key, { sub: `user-${++users}`, claims: { workspace: 'acme' } }),
      ),
    );
  const unavailable = (answer: Answer) => ({
    status: answer.status,
    code: answer.body.errors?.[0]?.extensions?.['code'],
  });
  const UNAVAILABLE = { status: 503, code: 'AUTH_UNAVAILABLE' };
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it.each<[string, JwksMode]>([
    ['answers 500', 'fail'],
    ['answers a body that is not JSON', 'garbage'],
    ['drops the connection', 'drop'],
  ])(
    'while its JWKS %s, 20 requests with fresh tokens ask it once: each is answered 503 AUTH_UNAVAILABLE, nothing is sent upstream',
    async (_what, mode) => {
      flaky.setMode(mode);
      const tokens = await freshTokens(20);
      const started = Date.now();
      const answers: Answer[] = [];
      for (const token of tokens) answers.push(await post(gateway.url, rounds(1), token));
      // At most one fetch per cooldown begun: one, unless this machine took over 1.5 s.
      const cooldowns = 1 + Math.floor((Date.now() - started) / COOLDOWN_MS);
      expect(answers.map(unavailable)).toEqual(answers.map(() => UNAVAILABLE));
      expect(flaky.fetches()).toBeGreaterThanOrEqual(1);
      expect(flaky.fetches()).toBeLessThanOrEqual(cooldowns);
      expect(stack.sandbox.requestLog()).toEqual([]);
    },
  );

  it('a fetch that fails keeps verified tokens working; after the cooldown, with the IdP back, new keys verify', async () => {
    const [known] = await freshTokens(1);
    expect((await post(gateway.url, rounds(1), known!)).status).toBe(200);
    expect(flaky.fetches()).toBe(1);

    // A key rotated in after the cooldown: its first token makes the gateway ask, and it fails.
    await sleep(COOLDOWN_MS);
    const f2 = await flaky.addKey('f2');
    flaky.setMode('fail');
    const [rotated, later] = await freshTokens(2, f2);
    expect(unavailable(await post(gateway.url, rounds(1), rotated!))).toEqual(UNAVAILABLE);
    expect(flaky.fetches()).toBe(2);

    // Meanwhile: a token verified before, and a new one of a key the gateway holds, still run; a
    // token of the new key is refused without asking again.
    expect((await post(gateway.url, rounds(1), known!)).status).toBe(200);
    const [other] = await freshTokens(1);
    expect((await post(gateway.url, rounds(1), other!)).status).toBe(200);
    expect(unavailable(await post(gateway.url, rounds(1), later!))).toEqual(UNAVAILABLE);
    expect(flaky.fetches()).toBe(2);

    flaky.setMode('serve');
    await sleep(COOLDOWN_MS);
    const answer = await post(gateway.url, rounds(1), later!);
    expect(answer.status).toBe(200);
    expect(answer.body.errors).toBeUndefined();
    expect(flaky.fetches()).toBe(3);
  });

  it('while its JWKS hangs, requests wait for one fetch at most; after a failure, those sent while the next fetch hangs are answered at once', async () => {
    // A fresh gateway: the requests sent together join the one fetch, and fail with it.
    flaky.setMode('hang');
    const together = (await freshTokens(5)).map((token) => post(gateway.url, rounds(1), token));
    await vi.waitFor(() => expect(flaky.held()).toBe(1));
    flaky.setMode('fail');
    const joined = await Promise.all(together);
    expect(joined.map(unavailable)).toEqual(joined.map(() => UNAVAILABLE));
    expect(flaky.fetches()).toBe(1);

    // After the cooldown, one request asks again, and that fetch hangs: the others are answered
    // while it is still held, without asking.
    flaky.setMode('hang');
    await sleep(COOLDOWN_MS);
    const [first, ...rest] = await freshTokens(20);
    const probe = post(gateway.url, rounds(1), first!);
    await vi.waitFor(() => expect(flaky.held()).toBe(1));
    const meanwhile = await Promise.all(rest.map((token) => post(gateway.url, rounds(1), token)));
    expect(meanwhile.map(unavailable)).toEqual(meanwhile.map(() => UNAVAILABLE));
    expect(flaky.held()).toBe(1);
    expect(flaky.fetches()).toBe(2);

    // The IdP comes back: the fetch held is answered, and its request runs.
    flaky.setMode('serve');
    expect((await probe).status).toBe(200);
    const [next] = await freshTokens(1);
    expect((await post(gateway.url, rounds(1), next!)).status).toBe(200);
    expect(flaky.fetches()).toBe(2);
  }, 20_000);
});

describe('a token is verified once per request, whichever door takes it', () => {
  // JWT_JWKS_COOLDOWN_MS=0 (default 30 s): every verification of a token whose key is not held
  // asks the identity provider, so its fetches count the verifications.
  let counting: IdentityProvider;
  let gateway: Gateway;
  beforeAll(async () => {
    counting = await startIdentityProvider();
    gateway = await startGateway(stack.sandbox, {
      config: { ...jwtConfig(), jwtJwksUrl: counting.jwksUrl, jwtJwksCooldownMs: 0 },
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await counting?.close();
  });

  it('10 requests on /graphql (the repeat-view front, then Yoga) with tokens of a key it lacks: 10 fetches, 10 refusals', async () => {
    const stranger = await makeKey('not-published');
    // The first token also makes the first fetch of the keys (then one more for its `kid`).
    await post(gateway.url, rounds(1), await sign(stranger, { claims: { workspace: 'acme' } }));
    const before = counting.fetches();
    for (let i = 0; i < 10; i++) {
      const token = await sign(stranger, { sub: `user-${i}`, claims: { workspace: 'acme' } });
      const answer = await post(gateway.url, rounds(1), token);
      expect(answer.status).toBe(401);
      expect(answer.body.errors?.[0]?.extensions?.['code']).toBe('UNAUTHENTICATED');
    }
    expect(counting.fetches() - before).toBe(10);
    expect(stack.sandbox.requestLog()).toEqual([]);
  });

  it('with the identity provider failing, 10 requests ask it 10 times, not 20', async () => {
    counting.setMode('fail');
    const before = counting.fetches();
    for (let i = 0; i < 10; i++) {
      const token = await sign(k1, { sub: `failing-${i}`, claims: { workspace: 'acme' } });
      const answer = await post(gateway.url, rounds(1), token);
      expect(answer.status).toBe(503);
    }
    expect(counting.fetches() - before).toBe(10);
    counting.setMode('serve');
  });
});
