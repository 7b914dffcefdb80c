import type { KeyObject } from 'node:crypto';
import { errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { LRUCache } from 'lru-cache';
import type { JwtAlgorithm } from './auth-mode.js';

/** Seconds of clock difference with the identity provider allowed on `exp` and `nbf`. */
export const CLOCK_TOLERANCE_SECONDS = 5;

/** Verified tokens kept, at most; the least recently used go first. */
const CACHED_TOKENS = 10_000;

/** What a verified token says: its claims, `sub` and `exp` among them. */
export interface VerifiedToken {
  readonly subject: string;
  /**
   * The instant, in milliseconds since the epoch, from which the token is refused: `exp` plus
   * {@link CLOCK_TOLERANCE_SECONDS}. It is valid while `Date.now()` is below it.
   */
  readonly validUntil: number;
  readonly claims: Readonly<JWTPayload>;
}

/**
 * When jose starts refusing a token of `exp`: it compares whole seconds, and refuses from the
 * second at which `exp <= now - tolerance`.
 */
const refusedFrom = (exp: number) => (Math.ceil(exp) + CLOCK_TOLERANCE_SECONDS) * 1000;

/** A token refused, and which check it failed (the message, for the client). */
export class TokenRejected extends Error {
  override readonly name = 'TokenRejected';
}

/** Options of {@link createTokenVerifier}. */
export interface TokenVerifierOptions {
  /** The key that signs the tokens, or a resolver picking it by the token's header (a JWKS). */
  keys: KeyObject | JWTVerifyGetKey;
  issuer: string;
  audience: string;
  algorithms: readonly JwtAlgorithm[];
}

/** Verifies a token: its claims, or a {@link TokenRejected}; a cached token comes back at once. */
export type VerifyToken = (token: string) => VerifiedToken | Promise<VerifiedToken>;

const at = (seconds: unknown) =>
  typeof seconds === 'number' ? new Date(seconds * 1000).toISOString() : 'an invalid time';

/**
 * Why jose refused a token, as the client is told; null for a failure that is not the token's
 * (the JWKS could not be fetched: a `KeysUnavailable`), which is thrown on as it is.
 */
function reasonOf(error: unknown, algorithms: readonly JwtAlgorithm[]): string | null {
  if (error instanceof errors.JWTExpired) {
    return `The token expired at ${at(error.payload.exp)} (its "exp" claim).`;
  }
  if (error instanceof errors.JWTClaimValidationFailed) {
    const { claim, reason, payload } = error;
    if (reason === 'missing') return `The token has no "${claim}" claim: it is required.`;
    if (claim === 'nbf' && reason === 'check_failed') {
      return `The token is not valid before ${at(payload.nbf)} (its "nbf" claim).`;
    }
    if (claim === 'iss') {
      return 'The token was issued by another issuer (its "iss" claim is not JWT_ISSUER).';
    }
    if (claim === 'aud') {
      return 'The token is addressed to another audience (its "aud" claim does not name JWT_AUDIENCE).';
    }
    return `The token's "${claim}" claim is invalid.`;
  }
  if (error instanceof errors.JOSEAlgNotAllowed) {
    return `The token's algorithm ("alg") is not accepted: only ${algorithms.join(', ')}.`;
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return "The token's signature does not verify: it was altered, or signed with another key.";
  }
  if (error instanceof errors.JWKSNoMatchingKey) {
    return 'No key of the identity provider matches the token\'s key id ("kid").';
  }
  if (error instanceof errors.JWKSMultipleMatchingKeys) {
    return 'The token names no key id ("kid"), and several keys of the identity provider could verify it.';
  }
  if (
    error instanceof errors.JWSInvalid ||
    error instanceof errors.JWTInvalid ||
    error instanceof errors.JOSENotSupported
  ) {
    return 'The token is not a well-formed signed JWT.';
  }
  return null;
}

/**
 * Verifies bearer tokens with jose: the signature (one of `algorithms`, with `keys`), `iss`,
 * `aud`, `exp` and `nbf` ({@link CLOCK_TOLERANCE_SECONDS} allowed), and that `exp` and `sub` are
 * there. A verified token is kept until its `validUntil`, when jose would refuse it
 * ({@link CACHED_TOKENS} at most), so that each is verified once, not per request, and a token is
 * answered alike from the cache or not; a token refused is verified again when sent again.
 */
export function createTokenVerifier(options: TokenVerifierOptions): VerifyToken {
  const { keys, issuer, audience } = options;
  const algorithms = [...options.algorithms];
  const verified = new LRUCache<string, VerifiedToken>({ max: CACHED_TOKENS });

  async function verify(token: string): Promise<VerifiedToken> {
    let claims: JWTPayload;
    try {
      ({ payload: claims } = await jwtVerify(token, keys, {
        issuer,
        audience,
        algorithms,
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        requiredClaims: ['exp', 'sub'],
      }));
    } catch (error) {
      const reason = reasonOf(error, algorithms);
      if (reason === null) throw error;
      throw new TokenRejected(reason);
    }
    if (typeof claims.sub !== 'string' || claims.sub === '') {
      throw new TokenRejected('The token\'s "sub" claim is not a non-empty string.');
    }
    const result: VerifiedToken = {
      subject: claims.sub,
      validUntil: refusedFrom(claims.exp!),
      claims,
    };
    verified.set(token, result);
    return result;
  }

  return (token) => {
    const cached = verified.get(token);
    if (cached && Date.now() < cached.validUntil) return cached;
    if (cached) verified.delete(token);
    return verify(token);
  };
}
