import type { CreditBudget } from '../credits/credit-budget.js';
import type { CreditLedger } from '../credits/credit-ledger.js';
import type { EndpointName } from './endpoints.js';
import type { ListEnvelope, UpstreamRecord } from './types.js';
import type { TraceHeaders } from './upstream-trace.js';

/** One page request, as every policy and the transport see it. */
export interface UpstreamRequest {
  readonly endpoint: EndpointName;
  /** The canonical query string of the filters (see `buildFilterQuery`), without paging. */
  readonly filterQuery: string;
  /** The upstream's cursor of the page, or null for the first. */
  readonly cursor: string | null;
  /** Records asked for, 1..`UPSTREAM_MAX_LIMIT`; a policy may lower it (the budget does). */
  readonly limit: number;
  /** Records at the start of the page the caller will drop (it resumes inside the page). */
  readonly skip: number;
  /**
   * The caller's key: forwarded as `X-API-Key`, never logged, never part of a shared key. Empty
   * when the request carried none: `requireKey` then refuses the call.
   */
  readonly apiKey: string;
  /** Where the requests sent and the credits charged for this call are booked. */
  readonly ledger: CreditLedger;
  /** What the operation may still spend; absent, nothing limits it. */
  readonly budget?: CreditBudget;
  /** Aborts the call: the client went away, or the operation's deadline passed (`deadline`). */
  readonly signal?: AbortSignal;
  /** When the operation's deadline passes (ms since the epoch): no wait should outlast it. */
  readonly deadline?: number;
  /**
   * The caller sent `Cache-Control: no-cache`: a cached page is not served, the page is fetched
   * (and charged) and the cache refreshed with it.
   */
  readonly fresh?: boolean;
  /** The W3C trace context the transport sends with it (its client span's); absent, none. */
  readonly traceHeaders?: TraceHeaders;
}

/** The fields a policy may change in the request it passes inward (see {@link requestWith}). */
export type RequestChanges = Partial<
  Pick<UpstreamRequest, 'limit' | 'ledger' | 'signal' | 'deadline' | 'traceHeaders'>
>;

/**
 * `request` with `changes` made (a change left undefined keeps the request's field): the request
 * a policy passes inward. Written field by field, not as `{ ...request, ...changes }`: on Node
 * 20, a spread that adds a field allocates about 1 KB where this literal takes about 0.1, and a
 * request lives as long as its exchange, through the young generation's collections
 * (BENCHMARKS.md, issue 39). The type lists every field, so that a field added to
 * {@link UpstreamRequest} cannot be dropped here.
 */
export function requestWith(request: UpstreamRequest, changes: RequestChanges): UpstreamRequest {
  const copy: { [K in keyof Required<UpstreamRequest>]: UpstreamRequest[K] } = {
    endpoint: request.endpoint,
    filterQuery: request.filterQuery,
    cursor: request.cursor,
    limit: changes.limit ?? request.limit,
    skip: request.skip,
    apiKey: request.apiKey,
    ledger: changes.ledger ?? request.ledger,
    budget: request.budget,
    signal: changes.signal ?? request.signal,
    deadline: changes.deadline ?? request.deadline,
    fresh: request.fresh,
    traceHeaders: changes.traceHeaders ?? request.traceHeaders,
  };
  return copy;
}

/** One page as the service answered it: facts, booked and cached by the policies around it. */
export interface UpstreamPage {
  /** The success envelope. */
  readonly envelope: ListEnvelope<UpstreamRecord>;
  /** The length of the body it was parsed from (characters, about its bytes): what it weighs. */
  readonly bytes: number;
}

/**
 * Fetches one page: resolves with the page, rejects with an `UpstreamError`, and never throws (a
 * refusal is a rejected promise too). The transport is one; every policy is another that wraps
 * it, with the same signature.
 */
export type UpstreamCall = (request: UpstreamRequest) => Promise<UpstreamPage>;

/**
 * A policy (breaker, retry, cache, dedupe...) wraps the call it is given. Each is made by a
 * factory in `policies/`, which takes the state it keeps; `operationCall` composes them all.
 *
 * The policies every exchange goes through are written with `then`, not `async`: each layer
 * stays pending for the whole exchange, and an `async` layer holds about 0.4 KB where `then`
 * holds about 0.2. A nested query keeps some twenty exchanges in flight, and at saturation what
 * they hold outlives the young generation's collections (BENCHMARKS.md, issue 39).
 */
export type UpstreamPolicy = (next: UpstreamCall) => UpstreamCall;
