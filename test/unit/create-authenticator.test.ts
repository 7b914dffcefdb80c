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
