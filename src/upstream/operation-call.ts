import type { CircuitBreaker } from './circuit-breaker.js';
import type { OperationDeadline } from './operation-deadline.js';
import type { PageStore } from './page-cache/page-store.js';
import { breaker } from './policies/breaker.js';
import { budget } from './policies/budget.js';
import { cache } from './policies/cache.js';
import { coalesce, type Flights } from './policies/coalesce.js';
import { concurrency } from './policies/concurrency.js';
import { deadline } from './policies/deadline.js';
import { dedupe, type OperationPages } from './policies/dedupe.js';
import { ledger } from './policies/ledger.js';
import { observe } from './policies/observe.js';
import { onPage, type PageListener } from './policies/on-page.js';
import { requestLimit } from './policies/request-limit.js';
import { requireKey } from './policies/require-key.js';
import { retry, type RetryOptions } from './policies/retry.js';
import { trace } from './policies/trace.js';
import { stale } from './policies/stale.js';
import type { Semaphore } from './semaphore.js';
import type { UpstreamCall, UpstreamPolicy } from './upstream-call.js';
import { observeAll, type UpstreamObserver } from './upstream-observer.js';
import type { UpstreamTrace } from './upstream-trace.js';

/**
 * What every operation's pipeline shares, made once per gateway by `createUpstream`: the
 * transport, and the state of the policies that outlive an operation.
 */
export interface SharedPipeline {
  /** The innermost call: one HTTP GET (`transport.ts`). */
  readonly transport: UpstreamCall;
  /** Told of exchanges, cache hits and misses, retries (the breaker's are its circuit's). */
  readonly observer: UpstreamObserver;
  readonly circuit: CircuitBreaker;
  /** The retry settings, with the gateway's retry budget. */
  readonly retry: RetryOptions;
  /** The page cache and the joined requests in flight; null when the cache is off. */
  readonly cache: {
    readonly store: PageStore;
    readonly claimMs: number;
    readonly flights: Flights;
    /** The store keeps pages past their TTL (`CACHE_STALE_SECONDS` > 0), served in outages. */
    readonly keepsStale: boolean;
  } | null;
}

/** One operation's part of the pipeline: its state, made per request (see `UpstreamSession`). */
export interface OperationParts {
  /** The pages it asked for: the same page twice is fetched once. */
  readonly pages: OperationPages;
  /** Its cap on requests in flight (`UPSTREAM_CONCURRENCY`). */
  readonly slots: Semaphore;
  /** Its signal: the client's, and its deadline (`OPERATION_TIMEOUT_MS`). */
  readonly deadline: OperationDeadline;
  /** Told of each page it receives (its record store). */
  readonly onPage?: PageListener;
  /** The most upstream requests it may send (`MAX_UPSTREAM_REQUESTS`); absent, any. */
  readonly maxRequests?: number;
  /** Its traces, when they are on: a span per request sent, the pages served without one. */
  readonly trace?: UpstreamTrace;
}

/** Wraps `call` in `policies`, the first innermost: `wrap(t, a, b)` is `b(a(t))`. */
export function wrap(call: UpstreamCall, ...policies: UpstreamPolicy[]): UpstreamCall {
  return policies.reduce((inner, policy) => policy(inner), call);
}

/**
 * One operation's upstream call: the whole pipeline in one list, from the transport outward (each
 * policy a file of its own in `policies/`, each a function `(next) => call`):
 *
 *   transport → trace → ledger → observe → breaker → retry → cache → coalesce → stale → budget
 *     → requestLimit → onPage → concurrency → deadline → requireKey → dedupe    (the operation's)
 *
 * The trace (only with traces on), the ledger, observe and the breaker wrap the transport inside
 * the retries, so that they see every attempt; coalescing is outside the cache, so that
 * concurrent calls for a page look it up once; the stale fallback is outside the retries and the
 * breaker, so that it answers only once they gave up (or refused), and outside the joining, so
 * that every call joined to a failed request falls back, and books it, on its own; the budget is
 * outside all of them, so that a page served without a request settles to 0 credits. The
 * operation's policies are outermost: a page asked twice is fetched, capped and listened to once,
 * and a call without a key neither starts the deadline nor takes a slot. With traces on, the
 * cache and the coalescing tell the operation's trace too of the pages they serve.
 */
export function operationCall(shared: SharedPipeline, operation: OperationParts): UpstreamCall {
  const { observer } = shared;
  const served = operation.trace ? observeAll(observer, operation.trace) : observer;
  return wrap(
    shared.transport,
    ...(operation.trace ? [trace(operation.trace)] : []),
    ledger(),
    observe(observer),
    breaker(shared.circuit),
    retry(shared.retry),
    ...(shared.cache
      ? [
          cache(shared.cache.store, { claimMs: shared.cache.claimMs, events: served }),
          coalesce(shared.cache.flights, served),
          ...(shared.cache.keepsStale ? [stale(shared.cache.store, served)] : []),
        ]
      : []),
    budget(),
    // The operation's own, around the shared ones:
    ...(operation.maxRequests ? [requestLimit(operation.maxRequests)] : []),
    ...(operation.onPage ? [onPage(operation.onPage)] : []),
    concurrency(operation.slots),
    deadline(operation.deadline),
    requireKey(),
    dedupe(operation.pages),
  );
}
