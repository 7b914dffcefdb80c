import { GraphQLError } from 'graphql';
import { maskError as yogaMaskError } from 'graphql-yoga';
import { UpstreamError } from './upstream/upstream-error.js';

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
  /** The operation's estimate is above its budget: refused before any upstream request. */
  CREDIT_BUDGET_EXCEEDED: 'CREDIT_BUDGET_EXCEEDED',
  /** The operation spent its budget while running: the rest was not fetched. */
  CREDIT_BUDGET_EXHAUSTED: 'CREDIT_BUDGET_EXHAUSTED',
  /** The operation ran past `OPERATION_TIMEOUT_MS`: the fields still open were not completed. */
  OPERATION_TIMEOUT: 'OPERATION_TIMEOUT',
  /** The answer could hold more records than `MAX_RESPONSE_RECORDS`: refused before running. */
  RESPONSE_TOO_LARGE: 'RESPONSE_TOO_LARGE',
  /** The HTTP request is malformed, e.g. a `variables` parameter that is not JSON (HTTP 400). */
  BAD_REQUEST: 'BAD_REQUEST',
  /** A variable's value does not fit its type, e.g. 1.5 or "2000" for an Int (no scalar code). */
  BAD_USER_INPUT: 'BAD_USER_INPUT',
  /** The request body is above `MAX_REQUEST_BYTES` (HTTP 413; the connection is closed). */
  REQUEST_ENTITY_TOO_LARGE: 'REQUEST_ENTITY_TOO_LARGE',
  /** The document nests selection sets, lists and arguments too deep to parse (HTTP 400). */
  DOCUMENT_TOO_DEEP: 'DOCUMENT_TOO_DEEP',
  /** Fields nested deeper than `MAX_DEPTH` (HTTP 400); `extensions` has `limit` and `found`. */
  MAX_DEPTH_EXCEEDED: 'MAX_DEPTH_EXCEEDED',
  /** More aliases than `MAX_ALIASES` (HTTP 400); `extensions` has `limit` and `found`. */
  MAX_ALIASES_EXCEEDED: 'MAX_ALIASES_EXCEEDED',
  /** More tokens than `MAX_TOKENS`, refused while parsing (HTTP 400); `extensions.limit`. */
  MAX_TOKENS_EXCEEDED: 'MAX_TOKENS_EXCEEDED',
  /** More directives than `MAX_DIRECTIVES` (HTTP 400); `extensions` has `limit` and `found`. */
  MAX_DIRECTIVES_EXCEEDED: 'MAX_DIRECTIVES_EXCEEDED',
  /**
   * APQ: a hash sent without its query is not registered (yet, or any more): send it again with
   * the query (HTTP 404; the message is `PersistedQueryNotFound`, which clients retry on).
   */
  PERSISTED_QUERY_NOT_FOUND: 'PERSISTED_QUERY_NOT_FOUND',
  /** APQ: the `sha256Hash` sent is not the SHA-256 of the query sent with it (HTTP 400). */
  PERSISTED_QUERY_MISMATCH: 'PERSISTED_QUERY_MISMATCH',
  /** `TRUSTED_DOCUMENTS` is set and the operation id sent is not in it (HTTP 400). */
  PERSISTED_QUERY_NOT_IN_LIST: 'PERSISTED_QUERY_NOT_IN_LIST',
  /** `TRUSTED_DOCUMENTS` is set and the request sent query text, or no operation id (HTTP 400). */
  PERSISTED_QUERY_ID_REQUIRED: 'PERSISTED_QUERY_ID_REQUIRED',
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

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
  /** The operation's estimate in credits (CREDIT_BUDGET_EXCEEDED). */
  estimate?: number;
  /** The credits the operation was allowed (CREDIT_BUDGET_EXCEEDED). */
  budget?: number;
  /** Records the answer could hold (RESPONSE_TOO_LARGE). */
  records?: number;
  /** The limit a document broke (RESPONSE_TOO_LARGE, MAX_DEPTH_EXCEEDED and the other query limits). */
  limit?: number;
  /** What the document has of what `limit` bounds, when known. */
  found?: number;
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

/**
 * The GraphQL error of an upstream failure: its code, message and facts (`requestId`,
 * `retryAfter`, `upstreamStatus`) in `extensions`.
 */
export function fromUpstreamError(error: UpstreamError): GraphQLError {
  return gatewayError(error.code, error.message, {
    requestId: error.requestId,
    retryAfter: error.retryAfter,
    upstreamStatus: error.status,
  });
}

/**
 * Yoga's `maskError`, where the schema edge turns errors into what the client sees: an
 * `UpstreamError` thrown under a field becomes its coded GraphQL error at that field's path; any
 * other error that is not a `GraphQLError` is masked to "Unexpected error." as Yoga does.
 */
export function maskError(error: unknown, message: string, isDev?: boolean): Error {
  const original = error instanceof GraphQLError ? error.originalError : error;
  if (original instanceof UpstreamError) {
    const coded = fromUpstreamError(original);
    if (!(error instanceof GraphQLError)) return coded;
    return new GraphQLError(coded.message, {
      nodes: error.nodes,
      source: error.source,
      positions: error.positions,
      path: error.path,
      extensions: coded.extensions,
    });
  }
  return yogaMaskError(error, message, isDev);
}
