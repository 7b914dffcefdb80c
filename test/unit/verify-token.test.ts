import { createLocalJWKSet, exportJWK, type JWTVerifyGetKey } from 'jose';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  CLOCK_TOLERANCE_SECONDS,
  createTokenVerifier,
  TokenRejected,
} from '../../src/auth/verify-token.js';
import { AUDIENCE, ISSUER, makeKey, sign, type SigningKey } from '../helpers/identity-provider.js';

let key: SigningKey;
/** The keys of `key`'s JWKS, and each lookup of them: a verification. */
let lookups: number;
let keys: JWTVerifyGetKey;
beforeAll(async () => {
  key = await makeKey('k1');
  const local = createLocalJWKSet({ keys: [{ ...(await exportJWK(key.publicKey)), kid: 'k1' }] });
  keys = (header, token) => {
    lookups += 1;
    return local(header, token);
  };
});
afterEach(() => vi.useRealTimers());

const verifier = () => {
  lookups = 0;
  return createTokenVerifier({ keys, issuer: ISSUER, audience: AUDIENCE, algorithms: ['RS256'] });
};

describe('createTokenVerifier', () => {
  it("verifies a token once, then answers from its cache, at once, until the token's exp", async () => {
    const verify = verifier();
    const token = await sign(key, { sub: 'alice' });
    const first = await verify(token);
    expect(first.subject).toBe('alice');
    const again = verify(token);
    expect(again).not.toBeInstanceOf(Promise);
    expect(again).toBe(first);
    expect(lookups).toBe(1);
  });

  it('verifies a cached token again past its exp, and refuses it then', async () => {
    const verify = verifier();
    const token = await sign(key, { exp: Math.floor(Date.now() / 1000) + 60 });
    await verify(token);
    vi.useFakeTimers({
      toFake: ['Date'],
      now: Date.now() + (60 + CLOCK_TOLERANCE_SECONDS + 1) * 1000,
    });
    await expect(verify(token)).rejects.toThrowError(/expired/);
    expect(lookups).toBe(2);
  });

  it('keeps a verified token until exp plus the clock tolerance (validUntil), the instant jose refuses it', async () => {
    const verify = verifier();
    const exp = Math.floor(Date.now() / 1000) + 60;
    const token = await sign(key, { exp });
    const validUntil = (exp + CLOCK_TOLERANCE_SECONDS) * 1000;
    expect(await verify(token)).toMatchObject({ subject: 'alice', validUntil });

    vi.useFakeTimers({ toFake: ['Date'], now: validUntil - 1 });
    const late = verify(token);
    expect(late).not.toBeInstanceOf(Promise);
    expect(late).toMatchObject({ validUntil });
    expect(lookups).toBe(1);

    vi.setSystemTime(validUntil);
    await expect(verify(token)).rejects.toThrowError(/expired/);
    expect(lookups).toBe(2);
  });

  it('accepts exp and nbf within the clock tolerance, not beyond it', async () => {
    const verify = verifier();
    const now = Math.floor(Date.now() / 1000);
    const late = now - CLOCK_TOLERANCE_SECONDS + 2;
    const early = now + CLOCK_TOLERANCE_SECONDS - 2;
    await expect(verify(await sign(key, { exp: late }))).resolves.toMatchObject({});
    await expect(verify(await sign(key, { nbf: early }))).resolves.toMatchObject({});
    const tooLate = await sign(key, { exp: now - CLOCK_TOLERANCE_SECONDS - 2 });
    await expect(verify(tooLate)).rejects.toBeInstanceOf(TokenRejected);
  });

  it('keeps no refusal: a token refused is checked again each time it is sent', async () => {
    const verify = verifier();
    const other = await sign(key, { aud: 'another-api' });
    await expect(verify(other)).rejects.toThrowError(/audience/);
    await expect(verify(other)).rejects.toThrowError(/audience/);
    expect(lookups).toBe(2);
  });
});
