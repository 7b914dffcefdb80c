import type { GraphQLError } from 'graphql';
import { AuthFailure } from '../auth/create-authenticator.js';
import { ErrorCode, gatewayError } from '../errors.js';

/** `text` as an RFC 6750 quoted string: printable ASCII, without `"` and `\`. */
function quoted(text: string): string {
  return `"${text.replace(/[^\x20-\x7e]|["\\]/g, '')}"`;
}

/** UNAUTHENTICATED for a token that failed a check, with RFC 6750's `WWW-Authenticate`. */
function invalidToken(message: string): GraphQLError {
  const error = gatewayError(ErrorCode.UNAUTHENTICATED, message);
  (error.extensions['http'] as { headers?: object }).headers = {
    'WWW-Authenticate': `Bearer error="invalid_token", error_description=${quoted(message)}`,
  };
  return error;
}

/**
 * The refusal of a caller that could not be resolved: 401 UNAUTHENTICATED with
 * `WWW-Authenticate: Bearer`, plus `error="invalid_token"` and its reason where a token was sent
 * (RFC 6750, section 3); 403 FORBIDDEN for a valid token whose workspace has no key; 503
 * AUTH_UNAVAILABLE when the identity provider's keys could not be fetched (the token could not be
 * checked). Anything but an {@link AuthFailure} is the identity provider's failure too.
 */
export function callerRefusal(failure: unknown): GraphQLError {
  if (!(failure instanceof AuthFailure)) {
    return gatewayError(
      ErrorCode.AUTH_UNAVAILABLE,
      "The identity provider's keys (JWT_JWKS_URL) could not be fetched, so the token could not be checked: nothing ran. Try again shortly.",
    );
  }
  switch (failure.kind) {
    case 'no-upstream-key':
      return gatewayError(ErrorCode.FORBIDDEN, failure.message);
    case 'keys-unavailable':
      return gatewayError(ErrorCode.AUTH_UNAVAILABLE, failure.message);
    case 'invalid-token':
      return invalidToken(failure.message);
    default:
      return gatewayError(ErrorCode.UNAUTHENTICATED, failure.message);
  }
}

/** The refusal of a caller whose token expired at `validUntil` (its `exp`, and the tolerance). */
export function expiredRefusal(validUntil: number): GraphQLError {
  return invalidToken(
    `The token expired at ${new Date(validUntil).toISOString()} (its "exp" claim, with the clock tolerance): nothing more runs with it. Send a new token (a WebSocket: connect again with it).`,
  );
}

/**
 * The WebSocket close code of a refused caller, in graphql-ws's terms: 4401 Unauthorized (no
 * token, a bad or expired one), 4403 Forbidden (a workspace without a key), 4503 for an identity
 * provider that could not be reached (a client may try again).
 */
export function closeCodeOf(refusal: GraphQLError): number {
  switch (refusal.extensions['code']) {
    case ErrorCode.FORBIDDEN:
      return 4403;
    case ErrorCode.AUTH_UNAVAILABLE:
      return 4503;
    default:
      return 4401;
  }
}
