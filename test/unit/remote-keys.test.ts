import type { CompactJWSHeaderParameters, FlattenedJWSInput } from 'jose';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JWKS_MAX_AGE_MS, KeysUnavailable, remoteKeys } from '../../src/auth/remote-keys.js';
import {
  startIdentityProvider,
  type IdentityProvider,
  type JwksMode,
} from '../helpers/identity-provider.js';

const COOLDOWN_MS = 30_000;

let idp: IdentityProvider;
/** The clock the key set reads, moved by the tests. */
let clock: number;
let keyOf: (kid: string) => Promise<unknown>;
beforeEach(async () => {
  idp = await startIdentityProvider();
  await idp.addKey('k1');
  clock = 1_000_000;
  const keys = remoteKeys(idp.jwksUrl, {
    cooldownMs: COOLDOWN_MS,
    timeoutMs: 200,
    now: () => clock,
  });
  const token = { payload: '', signature: '' } as FlattenedJWSInput;
  keyOf = async (kid) => keys({ alg: 'RS256', kid } as CompactJWSHeaderParameters, token);
});
afterEach(() => idp.close());

describe('remoteKeys', () => {
  it('fetches once for calls made together, and not again while the keys are fresh', async () => {
    await Promise.all([keyOf('k1'), keyOf('k1'), keyOf('k1')]);
    clock += JWKS_MAX_AGE_MS - 1;
    await keyOf('k1');
    expect(idp.fetches()).toBe(1);
    clock += 1;
    await keyOf('k1');
    expect(idp.fetches()).toBe(2);
  });

  it('fetches for a kid the keys lack at most once per cooldown after a fetch', async () => {
    await keyOf('k1');
    await expect(keyOf('k2')).rejects.toThrowError(/no applicable key/i);
    expect(idp.fetches()).toBe(1);
    await idp.addKey('k2');
    clock += COOLDOWN_MS;
    await expect(keyOf('k2')).resolves.toBeDefined();
    expect(idp.fetches()).toBe(2);
  });

  it.each<[string, JwksMode]>([
    ['answers 500', 'fail'],
    ['answers a body that is not JSON', 'garbage'],
    ['drops the connection', 'drop'],
    ['hangs past the timeout', 'hang'],
  ])(
    'when the JWKS %s, refuses every call at once for the cooldown, then asks once again',
    async (_what, mode) => {
      idp.setMode(mode);
      await expect(keyOf('k1')).rejects.toBeInstanceOf(KeysUnavailable);
      expect(idp.fetches()).toBe(1);
      clock += COOLDOWN_MS - 1;
      for (let i = 0; i < 5; i++) {
        await expect(keyOf('k1')).rejects.toThrowError(/asked again in 1 ms/);
      }
      expect(idp.fetches()).toBe(1);

      idp.setMode('serve');
      clock += 1;
      await expect(keyOf('k1')).resolves.toBeDefined();
      expect(idp.fetches()).toBe(2);
    },
  );

  it('after a failure, refuses the other calls at once while the one fetch after the cooldown is out', async () => {
    idp.setMode('fail');
    await expect(keyOf('k1')).rejects.toBeInstanceOf(KeysUnavailable);
    idp.setMode('hang');
    clock += COOLDOWN_MS;
    const probe = keyOf('k1');
    await expect.poll(() => idp.held()).toBe(1);
    await expect(keyOf('k1')).rejects.toThrowError(/once the fetch still out ends/);
    idp.setMode('serve');
    await expect(probe).resolves.toBeDefined();
    await expect(keyOf('k1')).resolves.toBeDefined();
    expect(idp.fetches()).toBe(2);
  });

  it('keeps serving keys it holds while fetches fail; a kid they lack is refused without asking', async () => {
    await keyOf('k1');
    await idp.addKey('k2');
    idp.setMode('fail');
    clock += COOLDOWN_MS;
    await expect(keyOf('k2')).rejects.toBeInstanceOf(KeysUnavailable);
    expect(idp.fetches()).toBe(2);
    await expect(keyOf('k1')).resolves.toBeDefined();
    await expect(keyOf('k2')).rejects.toBeInstanceOf(KeysUnavailable);
    expect(idp.fetches()).toBe(2);
  });

  it('does not use keys past their age while they cannot be fetched again', async () => {
    await keyOf('k1');
    idp.setMode('fail');
    clock += JWKS_MAX_AGE_MS;
    await expect(keyOf('k1')).rejects.toBeInstanceOf(KeysUnavailable);
    await expect(keyOf('k1')).rejects.toBeInstanceOf(KeysUnavailable);
    expect(idp.fetches()).toBe(2);
  });
});
