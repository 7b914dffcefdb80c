import type { Config } from '../config.js';
import { algorithmsFor, authSettingsProblems } from './auth-mode.js';
import { parseCreditQuota, type CreditQuota } from '../credits/quota/credit-quota.js';
import { upstreamKeyOf, upstreamKeySource, workspaceOf } from './upstream-keys.js';
import { remoteKeys } from './remote-keys.js';
import { createTokenVerifier, TokenRejected, type VerifiedToken } from './verify-token.js';

/** Who a request comes from, and the key its upstream requests carry. */
export interface Caller {
  /**
   * Who calls, for per-caller policies (its credit quota): the key the request sent (`api-key`),
   * null when it sent none; with `AUTH_MODE=jwt`, the token's workspace (`JWT_WORKSPACE_CLAIM`,
   * null without one) and `sub` together, as a JSON array (`["acme","alice"]`), since a `sub` is
   * unique only within its workspace. Never logged; Redis holds only its HMAC.
   */
  readonly principal: string | null;
  /** The key the session forwards upstream; null when the caller has none (`api-key` only). */
  readonly upstreamKey: string | null;
  /** The principal's own quota, from its token's `JWT_QUOTA_CLAIM`; absent: `CREDIT_QUOTA`. */
  readonly quota?: CreditQuota;
  /**
   * The instant, in milliseconds since the epoch, from which the caller's credentials are refused
   * (it is valid while `Date.now()` is below it): for a token, its `exp` plus the clock tolerance
   * (`CLOCK_TOLERANCE_SECONDS`), when the same token sent over HTTP gets 401; `Infinity` for an
   * API key, whose end the gateway does not know.
   */
  readonly validUntil: number;
}

/** Why a request is refused before it runs. */
export type AuthFailureKind =
  /** No bearer token was sent: 401. */
  | 'no-token'
  /** A token was sent and failed a check: 401, `error="invalid_token"`. */
  | 'invalid-token'
  /** A valid token whose workspace has no upstream key here: 403. */
  | 'no-upstream-key'
  /** The identity provider's keys could not be fetched (`JWT_JWKS_URL`): 503, try again. */
  | 'keys-unavailable';

/** A request refused by authentication; the message says which check failed. */
export class AuthFailure extends Error {
  override readonly name = 'AuthFailure';
  constructor(
    readonly kind: AuthFailureKind,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Resolves the caller of a request from its headers, or throws an {@link AuthFailure}; any other
 * error is the gateway's (the identity provider's keys could not be fetched). Synchronous where
 * nothing needs waiting for (an API key, a token verified before).
 */
export type Authenticate = (headers: HeaderReader) => Caller | Promise<Caller>;

/** What authentication reads of a request's headers: a Fetch `Headers`, or node's, adapted. */
export type HeaderReader = Pick<Headers, 'get' | 'has'>;

/** The caller's key from `X-API-Key`, or else `Authorization: Bearer <key>`; null if neither. */
function apiKeyFrom(headers: HeaderReader): string | null {
  const key = headers.get('x-api-key')?.trim();
  if (key) return key;
  const match = /^Bearer\s+(.+)$/i.exec(headers.get('authorization') ?? '');
  return match?.[1]?.trim() || null;
}

/** The bearer token of `Authorization: Bearer <token>`, or null. */
function bearerToken(headers: HeaderReader): string | null {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(headers.get('authorization') ?? '');
  return match?.[1] ?? null;
}

function noToken(headers: HeaderReader): AuthFailure {
  const how =
    'send "Authorization: Bearer <token>" with a token of the identity provider (AUTH_MODE=jwt)';
  if (headers.has('authorization')) {
    return new AuthFailure('no-token', `The Authorization header is not a bearer token: ${how}.`);
  }
  if (headers.has('x-api-key')) {
    return new AuthFailure(
      'no-token',
      `This gateway does not take an X-API-Key from its callers: ${how}.`,
    );
  }
  return new AuthFailure('no-token', `No token was sent: ${how}.`);
}

/**
 * How requests are authenticated under `config.authMode`, built once per gateway (the JWKS and
 * the verified tokens are shared by every request and both endpoints). `api-key`: the key the
 * request sends is the caller and is forwarded (a request without one still runs, and fails where
 * it would call the service). `jwt`: the bearer token is verified, its workspace and `sub` are
 * the caller, and the upstream key is the server's; an `X-API-Key` the request sends is never
 * read.
 */
export function createAuthenticator(config: Config): Authenticate {
  if (config.authMode === 'api-key') {
    return (headers) => {
      const key = apiKeyFrom(headers);
      return { principal: key, upstreamKey: key, validUntil: Infinity };
    };
  }
  const { jwtIssuer: issuer, jwtAudience: audience, jwtJwksUrl, jwtPublicKey } = config;
  // The PEM's key verifies only the algorithms of its type, so another is refused by name.
  const signer = jwtPublicKey
    ? { keys: jwtPublicKey, algorithms: algorithmsFor(jwtPublicKey, config.jwtAlgorithms) }
    : jwtJwksUrl
      ? {
          keys: remoteKeys(jwtJwksUrl, { cooldownMs: config.jwtJwksCooldownMs }),
          algorithms: config.jwtAlgorithms,
        }
      : null;
  const source = upstreamKeySource(config);
  if (!issuer || !audience || !signer || !source) {
    throw new Error(
      `AUTH_MODE=jwt without its settings (${authSettingsProblems(config).join('; ')}): read the config with loadConfig`,
    );
  }
  const verify = createTokenVerifier({ ...signer, issuer, audience });

  const callerOf = (token: VerifiedToken): Caller => {
    const upstreamKey = upstreamKeyOf(source, token.claims);
    if (upstreamKey === null) {
      const claim = config.jwtWorkspaceClaim;
      throw new AuthFailure(
        'no-upstream-key',
        token.claims[claim] === undefined
          ? `The token has no "${claim}" claim (JWT_WORKSPACE_CLAIM), which names the workspace whose key this gateway spends.`
          : `The token's workspace (its "${claim}" claim) has no API key on this gateway (UPSTREAM_KEYS_FILE).`,
      );
    }
    const quotaClaim = config.jwtQuotaClaim;
    const claimed = quotaClaim === null ? undefined : token.claims[quotaClaim];
    const caller = {
      principal: JSON.stringify([
        workspaceOf(token.claims, config.jwtWorkspaceClaim),
        token.subject,
      ]),
      upstreamKey,
      validUntil: token.validUntil,
    };
    if (claimed === undefined) return caller;
    // Refused rather than given CREDIT_QUOTA: a quota the issuer meant but wrote wrong could be
    // smaller than the default, and a token is easier to fix than a silent overspend.
    const quota = parseCreditQuota(claimed);
    if (quota === null) {
      throw new AuthFailure(
        'invalid-token',
        `The token's "${quotaClaim}" claim (JWT_QUOTA_CLAIM) is not a quota: it must be a string "<credits>/<minute|hour|day>", e.g. "20000/hour".`,
      );
    }
    return { ...caller, quota };
  };

  return (headers) => {
    const token = bearerToken(headers);
    if (!token) throw noToken(headers);
    const verified = verify(token);
    if (!(verified instanceof Promise)) return callerOf(verified);
    return verified.then(callerOf, (error: unknown) => {
      throw error instanceof TokenRejected
        ? new AuthFailure('invalid-token', error.message)
        : new AuthFailure(
            'keys-unavailable',
            "The identity provider's keys (JWT_JWKS_URL) could not be fetched, so the token could not be checked: nothing ran. Try again shortly.",
          );
    });
  };
}
