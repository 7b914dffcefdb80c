import { GraphQLError, type GraphQLErrorOptions } from 'graphql';
import { maskError as yogaMaskError } from 'graphql-yoga';
import {
  errorCatalogue,
  ErrorCode,
  type ErrorEntry,
  type GatewayErrorCode,
} from './errors/error-catalogue.js';
import { UpstreamError } from './upstream/upstream-error.js';

export { ErrorCode, type GatewayErrorCode };

/** Extra, code-specific facts carried in `extensions` next to `code`. */
export interface ErrorDetails {
  /** The GraphQL argument that broke a rule (INVALID_INPUT raised by the gateway). */
  argument?: string;
  /** The upstream's `meta.requestId`, to quote to the service's support. */
  requestId?: string;
  /** Seconds to wait before retrying (TOO_MANY_REQUESTS, CREDIT_QUOTA_EXCEEDED). */
  retryAfter?: number;
  /** The upstream HTTP status, when there was one. */
  upstreamStatus?: number;
  /** The operation's estimate in credits (CREDIT_BUDGET_EXCEEDED). */
  estimate?: number;
  /** The credits the operation was allowed (CREDIT_BUDGET_EXCEEDED). */
  budget?: number;
  /** Records the answer could hold (RESPONSE_TOO_LARGE). */
  records?: number;
  /** Upstream requests the operation could send (UPSTREAM_REQUESTS_EXCEEDED). */
  requests?: number;
  /** The limit a document broke (RESPONSE_TOO_LARGE, MAX_DEPTH_EXCEEDED and the other query limits). */
  limit?: number;
  /** What the document has of what `limit` bounds, when known. */
  found?: number;
  /** Credits left in the caller's quota (CREDIT_QUOTA_EXCEEDED). */
  available?: number;
  /**
   * What `limit` bounds (TOO_MANY_SUBSCRIPTIONS): `key`, the pollers of one upstream key;
   * `principal`, a principal's open subscriptions; `connection`, a WebSocket's; `alerts`, a principal's alerts.
   */
  scope?: 'key' | 'principal' | 'connection' | 'alerts';
}

/** Where an error points, and what caused it (as a `GraphQLError` carries them). */
export type ErrorLocation = Pick<
  GraphQLErrorOptions,
  'nodes' | 'source' | 'positions' | 'path' | 'originalError'
>;

/**
 * The one way to make a coded error: a `GraphQLError` with `code` and `details` in `extensions`,
 * answered with the HTTP status (and headers) the catalogue gives the code. Yoga passes it to the
 * client unmasked, without `extensions.http`.
 */
export function gatewayError(
  code: GatewayErrorCode,
  message: string,
  details: ErrorDetails = {},
  location: ErrorLocation = {},
): GraphQLError {
  const entry: ErrorEntry = errorCatalogue[code];
  return codedError(code, message, details, location, entry.http);
}

function codedError(
  code: GatewayErrorCode,
  message: string,
  details: ErrorDetails,
  location: ErrorLocation,
  http: ErrorEntry['http'],
): GraphQLError {
  const extensions: Record<string, unknown> = { code };
  for (const [key, value] of Object.entries(details)) {
    if (value !== undefined) extensions[key] = value;
  }
  // A copy: Yoga writes to an error's `http` (its `spec` flag), which must not reach the catalogue.
  if (http) extensions['http'] = { ...http };
  return new GraphQLError(message, { ...location, extensions });
}

/** INVALID_INPUT naming the argument and the rule it breaks, e.g. `first must be at most 500`. */
export function invalidArgument(argument: string, rule: string) {
  return gatewayError(ErrorCode.INVALID_INPUT, `Argument "${argument}": ${rule}.`, { argument });
}

/**
 * The GraphQL error of an upstream failure: its code, message and facts (`requestId`,
 * `retryAfter`, `upstreamStatus`) in `extensions`. A field's error, in a 200 beside the data the
 * operation has: never the HTTP status the catalogue gives the gateway's own refusal with the code
 * (a service's FORBIDDEN is not the gateway's 403).
 */
export function fromUpstreamError(
  error: UpstreamError,
  location: ErrorLocation = {},
): GraphQLError {
  const details = {
    requestId: error.requestId,
    retryAfter: error.retryAfter,
    upstreamStatus: error.status,
  };
  return codedError(error.code, error.message, details, location, undefined);
}

/**
 * Yoga's `maskError`, where the schema edge turns errors into what the client sees: an
 * `UpstreamError` thrown under a field becomes its coded GraphQL error at that field's path; any
 * other error that is not a `GraphQLError` is masked to "Unexpected error." as Yoga does.
 */
export function maskError(error: unknown, message: string, isDev?: boolean): Error {
  const original = error instanceof GraphQLError ? error.originalError : error;
  if (original instanceof UpstreamError) {
    if (!(error instanceof GraphQLError)) return fromUpstreamError(original);
    // Not its `originalError`: Yoga would answer an error caused by a non-GraphQL error as a 500.
    const { nodes, source, positions, path } = error;
    return fromUpstreamError(original, { nodes, source, positions, path });
  }
  return yogaMaskError(error, message, isDev);
}
