import { createPublicKey } from 'node:crypto';
import { exportSPKI } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { createAuthenticator, type Authenticate } from '../../src/auth/create-authenticator.js';
import { CLOCK_TOLERANCE_SECONDS } from '../../src/auth/verify-token.js';
import { defaultConfig } from '../../src/config.js';
import { AUDIENCE, ISSUER, makeKey, sign, type SigningKey } from '../helpers/identity-provider.js';

let key: SigningKey;
/** AUTH_MODE=jwt with one PEM key and one workspace key: no network. */
let authenticate: Authenticate;
beforeAll(async () => {
  key = await makeKey('pem');
  authenticate = createAuthenticator({
    ...defaultConfig,
    authMode: 'jwt',
    jwtPublicKey: createPublicKey(await exportSPKI(key.publicKey)),
    jwtIssuer: ISSUER,
    jwtAudience: AUDIENCE,
    upstreamApiKey: 'server-key',
  });
});

const bearer = (token: string) => new Headers({ authorization: `Bearer ${token}` });

describe('Caller.validUntil', () => {
  it('is Infinity for an API key', async () => {
    const caller = await createAuthenticator(defaultConfig)(new Headers({ 'x-api-key': 'k' }));
    expect(caller.validUntil).toBe(Infinity);
  });

  it("is a token's exp plus the clock tolerance, in ms, whether verified now or before", async () => {
    const exp = Math.floor(Date.now() / 1000) + 120;
    const token = await sign(key, { exp });
    const validUntil = (exp + CLOCK_TOLERANCE_SECONDS) * 1000;
    expect((await authenticate(bearer(token))).validUntil).toBe(validUntil);
    expect((await authenticate(bearer(token))).validUntil).toBe(validUntil);
  });
});

describe('Caller.principal with AUTH_MODE=jwt', () => {
  const principalOf = async (sub: string, claims: Record<string, unknown> = {}) =>
    (await authenticate(bearer(await sign(key, { sub, claims })))).principal;

  it('is the workspace and the sub together: a user of one workspace is not the same user of another', async () => {
    const principals = await Promise.all([
      principalOf('alice', { workspace: 'acme' }),
      principalOf('alice', { workspace: 'globex' }),
      principalOf('alice'),
      principalOf('bob', { workspace: 'acme' }),
      // Pieces that would run together if joined by a separator.
      principalOf('acme:alice', { workspace: 'x' }),
      principalOf('alice', { workspace: 'x:acme' }),
    ]);
    expect(new Set(principals).size).toBe(principals.length);
    expect(await principalOf('alice', { workspace: 'acme' })).toBe(principals[0]);
  });

  it('reads the workspace as UPSTREAM_KEYS_FILE does: a number as its text, anything else as none', async () => {
    expect(await principalOf('alice', { workspace: 7 })).toBe(
      await principalOf('alice', { workspace: '7' }),
    );
    expect(await principalOf('alice', { workspace: { id: 'acme' } })).toBe(
      await principalOf('alice'),
    );
  });
});
