import { createRemoteJWKSet, errors, type JWTVerifyGetKey } from 'jose';

/** How long keys fetched from a JWKS URL are used before they are fetched again. */
export const JWKS_MAX_AGE_MS = 10 * 60_000;

/**
 * How long one fetch of the JWKS may take, to the end of its body (jose's `timeoutDuration`): the
 * longest a request waits for the identity provider, since a fetch that failed is not repeated
 * within the cooldown.
 */
export const JWKS_TIMEOUT_MS = 5_000;

/** The identity provider's keys could not be fetched (now, or within the cooldown): try later. */
export class KeysUnavailable extends Error {
  override readonly name = 'KeysUnavailable';
}

/** Options of {@link remoteKeys}. */
export interface RemoteKeysOptions {
  /**
   * After a fetch that succeeded, how long a token whose `kid` the keys lack is refused without
   * fetching them again; after one that failed, how long every token that needs a fetch is
   * refused ({@link KeysUnavailable}) without asking again (`JWT_JWKS_COOLDOWN_MS`).
   */
  cooldownMs: number;
  /** See {@link JWKS_TIMEOUT_MS}. */
  timeoutMs?: number;
  /** The clock; `Date.now` unless a test moves it. */
  now?: () => number;
}

/**
 * The keys at `url`, for every token of every request: jose fetches and reads them
 * (`createRemoteJWKSet`), this decides when. They are fetched at the first token, again once
 * {@link JWKS_MAX_AGE_MS} old, and for a token whose `kid` they lack once `cooldownMs` has passed
 * since the last fetch (a key may have been added). Requests that need a fetch while one is out
 * join it, so none waits for more than one.
 *
 * A fetch that fails (an HTTP status but 200, a body that is not a JWKS, a timeout, a connection
 * refused or reset) is remembered for `cooldownMs`: meanwhile a token that needs a fetch is
 * refused at once with {@link KeysUnavailable}, and one the keys held can verify still is. Then
 * one fetch goes (while it is out, the others are still refused at once): if it succeeds the keys
 * are used again, if it fails the failure is remembered anew. Keys older than
 * {@link JWKS_MAX_AGE_MS} are not used while they cannot be fetched again.
 */
export function remoteKeys(url: string, options: RemoteKeysOptions): JWTVerifyGetKey {
  const { cooldownMs, timeoutMs = JWKS_TIMEOUT_MS, now = Date.now } = options;
  // jose never fetches of its own accord here: what it fetched never ages, a `kid` missing never
  // fetches again; `refresh` below is the only caller of `reload`.
  const jwks = createRemoteJWKSet(new URL(url), {
    cacheMaxAge: Infinity,
    cooldownDuration: Infinity,
    timeoutDuration: timeoutMs,
  });
  let fetchedAt = -Infinity;
  let failedAt = -Infinity;
  let fetching: Promise<void> | null = null;

  const refresh = (): Promise<void> => {
    if (failedAt > fetchedAt && (fetching || now() < failedAt + cooldownMs)) {
      const when = fetching
        ? 'once the fetch still out ends'
        : `in ${failedAt + cooldownMs - now()} ms`;
      return Promise.reject(
        new KeysUnavailable(
          `The fetch of ${url} failed, and it is asked again ${when} (JWT_JWKS_COOLDOWN_MS).`,
        ),
      );
    }
    fetching ??= jwks
      .reload()
      .then(
        () => {
          fetchedAt = now();
        },
        (cause: unknown) => {
          failedAt = now();
          throw new KeysUnavailable(`The fetch of ${url} failed: ${String(cause)}`, { cause });
        },
      )
      .finally(() => {
        fetching = null;
      });
    return fetching;
  };

  return async (header, token) => {
    if (now() >= fetchedAt + JWKS_MAX_AGE_MS) await refresh();
    try {
      return await jwks(header, token);
    } catch (error) {
      if (!(error instanceof errors.JWKSNoMatchingKey) || now() < fetchedAt + cooldownMs) {
        throw error;
      }
      await refresh();
      return jwks(header, token);
    }
  };
}
