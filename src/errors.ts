import { GraphQLError } from 'graphql';

/**
 * The stable `extensions.code` values a client can branch on. The first five are the upstream's
 * own codes, passed through unchanged; the rest are the gateway's.
 */
export const ErrorCode = {
  /** An argument breaks a rule of the service (or a cursor is malformed or reused elsewhere). */
  INVALID_INPUT: 'INVALID_INPUT',
  /** No API key was sent, or the service does not know it. */
  UNAUTHORIZED: 'UNAUTHORIZED',
  /** The caller's workspace has no credits left. */
  PAYMENT_REQUIRED: 'PAYMENT_REQUIRED',
  /** The service's abuse prevention blocked the request. */
  FORBIDDEN: 'FORBIDDEN',
  /** The workspace's rate limit was exceeded; `extensions.retryAfter` says when to retry. */
  TOO_MANY_REQUESTS: 'TOO_MANY_REQUESTS',
  /** The service could not be reached, timed out, failed (5xx) or answered with a malformed body. */
  UPSTREAM_UNAVAILABLE: 'UPSTREAM_UNAVAILABLE',
  /** The HTTP request is malformed, e.g. a `variables` parameter that is not JSON (HTTP 400). */
  BAD_REQUEST: 'BAD_REQUEST',
  /** A variable's value does not fit its type, e.g. 1.5 or "2000" for an Int (no scalar code). */
  BAD_USER_INPUT: 'BAD_USER_INPUT',
  /** The request body is above `MAX_REQUEST_BYTES` (HTTP 413; the connection is closed). */
  REQUEST_ENTITY_TOO_LARGE: 'REQUEST_ENTITY_TOO_LARGE',
  /** The document nests selection sets, lists and arguments too deep to parse (HTTP 400). */
  DOCUMENT_TOO_DEEP: 'DOCUMENT_TOO_DEEP',
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** The codes the upstream service itself defines (spec section 7). */
export const UPSTREAM_CODES: ReadonlySet<string> = new Set<ErrorCode>([
  ErrorCode.INVALID_INPUT,
  ErrorCode.UNAUTHORIZED,
  ErrorCode.PAYMENT_REQUIRED,
  ErrorCode.FORBIDDEN,
  ErrorCode.TOO_MANY_REQUESTS,
]);

/** Extra, code-specific facts carried in `extensions` next to `code`. */
export interface ErrorDetails {
  /** The GraphQL argument that broke a rule (INVALID_INPUT raised by the gateway). */
  argument?: string;
  /** The upstream's `meta.requestId`, to quote to the service's support. */
  requestId?: string;
  /** Seconds to wait before retrying (TOO_MANY_REQUESTS). */
  retryAfter?: number;
  /** The upstream HTTP status, when there was one. */
  upstreamStatus?: number;
}

/** A `GraphQLError` with a stable code; Yoga passes it to the client unmasked. */
export function gatewayError(code: ErrorCode, message: string, details: ErrorDetails = {}) {
  const extensions: Record<string, unknown> = { code };
  for (const [key, value] of Object.entries(details)) {
    if (value !== undefined) extensions[key] = value;
  }
  return new GraphQLError(message, { extensions });
}

/** INVALID_INPUT naming the argument and the rule it breaks, e.g. `first must be at most 500`. */
export function invalidArgument(argument: string, rule: string) {
  return gatewayError(ErrorCode.INVALID_INPUT, `Argument "${argument}": ${rule}.`, { argument });
}
