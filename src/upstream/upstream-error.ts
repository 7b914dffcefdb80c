import { isServiceCode, type ErrorCode, type ServiceErrorCode } from '../errors/error-catalogue.js';

/**
 * The codes an upstream failure carries: the service's own (spec section 7, listed in the error
 * catalogue), passed through; `UPSTREAM_UNAVAILABLE` for every failure that is the service's
 * rather than the caller's (unreachable, timed out, 5xx, an unknown code, a malformed body);
 * `CREDIT_BUDGET_EXHAUSTED` for a page the operation's budget did not allow to be sent; and
 * `OPERATION_TIMEOUT` for a call the operation's deadline cut short.
 */
export type UpstreamErrorCode =
  | ServiceErrorCode
  | Extract<
      ErrorCode,
      | 'UPSTREAM_UNAVAILABLE'
      | 'CREDIT_BUDGET_EXHAUSTED'
      | 'OPERATION_TIMEOUT'
      | 'UPSTREAM_REQUESTS_EXCEEDED'
    >;

/** Statuses that say the service failed this time and may not the next (spec: GETs only). */
const TRANSIENT_STATUSES: ReadonlySet<number> = new Set([500, 502, 503, 504]);

/** What kind of failure it was, for policies (retry, breaker) and logs. */
export type UpstreamFailure =
  | 'status' /** the service answered with an error status */
  | 'timeout' /** no complete answer within the time allowed */
  | 'refused' /** the connection was refused */
  | 'reset' /** the connection closed before a response arrived */
  | 'network' /** another network error */
  | 'malformed' /** a 2xx whose body is not the spec's envelope */
  | 'aborted' /** the call was aborted before it completed */
  | 'queued' /** aborted while it waited for one of the gateway's connections: not sent */
  | 'open-circuit' /** no request was sent: the circuit breaker is open */
  | 'deadline' /** the operation's deadline passed before the call completed */
  | 'no-key' /** no request was sent: the caller has no key */
  | 'budget' /** no request was sent: the operation's credits are spent */
  | 'request-limit'; /** no request was sent: the operation sent MAX_UPSTREAM_REQUESTS already */

/** The facts of an upstream failure. */
export interface UpstreamErrorFacts {
  code: UpstreamErrorCode;
  failure: UpstreamFailure;
  /** The HTTP status, when a response arrived. */
  status?: number;
  /** Seconds to wait before trying again, from `Retry-After`. */
  retryAfter?: number;
  /** The service's `meta.requestId`, to quote to its support. */
  requestId?: string;
}

/**
 * A failed upstream call, as facts: no GraphQL in it. `retryable` is true for a transient
 * fault (a network error, a timeout, 500/502/503/504), which a GET may safely repeat; a 429 is
 * not `retryable` but carries `retryAfter`. GraphQL errors are made from it at the schema edge.
 */
export class UpstreamError extends Error {
  override readonly name = 'UpstreamError';
  readonly code: UpstreamErrorCode;
  readonly failure: UpstreamFailure;
  readonly status: number | undefined;
  readonly retryAfter: number | undefined;
  readonly requestId: string | undefined;

  constructor(message: string, facts: UpstreamErrorFacts) {
    super(message);
    this.code = facts.code;
    this.failure = facts.failure;
    this.status = facts.status;
    this.retryAfter = facts.retryAfter;
    this.requestId = facts.requestId;
  }

  /** True when the same GET may succeed if sent again. */
  get retryable(): boolean {
    switch (this.failure) {
      case 'timeout':
      case 'refused':
      case 'reset':
      case 'network':
        return true;
      case 'status':
        return this.status !== undefined && TRANSIENT_STATUSES.has(this.status);
      default:
        return false;
    }
  }

  /**
   * True when the service is down rather than the caller refused: a 5xx, no answer in time, a
   * refused, reset or otherwise failed connection, a malformed body, or the breaker open. Never a
   * 4xx (400, 401, 402, 403, 429: the caller's to see), nor a call its client or its operation
   * stopped. A page kept past its TTL may answer it instead (`policies/stale.ts`).
   */
  get outage(): boolean {
    switch (this.failure) {
      case 'timeout':
      case 'refused':
      case 'reset':
      case 'network':
      case 'malformed':
      case 'open-circuit':
        return true;
      case 'status':
        return this.status !== undefined && this.status >= 500;
      default:
        return false;
    }
  }
}

/** Retry-After as whole seconds: a delay in seconds or an HTTP date; undefined if absent or bad. */
export function parseRetryAfter(header: string | string[] | undefined, now = Date.now()) {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}

interface ErrorBody {
  error?: { code?: unknown; message?: unknown };
  meta?: { requestId?: unknown };
}

/**
 * The error of a response with a failure status. The service's five codes pass through with its
 * message and request id; anything else (5xx, an unknown code, an error body that is not the
 * spec's) means the service is not usable right now: UPSTREAM_UNAVAILABLE.
 */
export function errorFromResponse(
  status: number,
  body: unknown,
  retryAfterHeader: string | string[] | undefined,
): UpstreamError {
  const { error, meta } = (typeof body === 'object' && body !== null ? body : {}) as ErrorBody;
  const code = typeof error?.code === 'string' ? error.code : undefined;
  const upstreamMessage = typeof error?.message === 'string' ? error.message : undefined;
  const facts = {
    failure: 'status',
    status,
    requestId: typeof meta?.requestId === 'string' ? meta.requestId : undefined,
    retryAfter: parseRetryAfter(retryAfterHeader),
  } as const;
  if (code !== undefined && isServiceCode(code) && status < 500) {
    return new UpstreamError(`Business-Signals API: ${upstreamMessage ?? code}`, {
      ...facts,
      code,
    });
  }
  const what = code ? `${status} ${code}` : `HTTP ${status}`;
  return new UpstreamError(
    `The Business-Signals API failed (${what})${upstreamMessage ? `: ${upstreamMessage}` : ''}.`,
    { ...facts, code: 'UPSTREAM_UNAVAILABLE' },
  );
}

/** UPSTREAM_UNAVAILABLE for a request that got no usable response at all. */
export function unavailable(failure: UpstreamFailure, reason: string, status?: number) {
  return new UpstreamError(`The Business-Signals API is unavailable: ${reason}.`, {
    code: 'UPSTREAM_UNAVAILABLE',
    failure,
    status,
  });
}
