import { createPageStore, type PageCacheOptions } from './page-cache/create-page-store.js';
import { budgetPolicy } from './policies/budget.js';
import { CircuitBreaker, type BreakerOptions, type BreakerState } from './policies/breaker.js';
import { cachePolicy } from './policies/cache.js';
import { coalescePolicy } from './policies/coalesce.js';
import { retryPolicy } from './policies/retry.js';
import { RetryBudget } from './retry-budget.js';
import { createTransport, type TransportOptions } from './transport.js';
import type { UpstreamCall, UpstreamPolicy } from './upstream-call.js';

/** Options of {@link createUpstream}. */
export interface UpstreamOptions extends TransportOptions {
  /** The page cache; absent, or with a TTL of 0, pages are neither cached nor joined. */
  cache?: PageCacheOptions;
  /** Retries (`UPSTREAM_RETRIES`, `RETRY_AFTER_MAX_MS`); absent, the defaults below. */
  retry?: { retries: number; retryAfterMaxMs: number };
  /** The circuit breaker (`BREAKER_FAILURES`, `BREAKER_OPEN_MS`); absent, the defaults below. */
  breaker?: BreakerOptions;
  /** Told of each retry, with its reason (`timeout`, `reset`, `503`, `429`, ...). */
  onRetry?: (reason: string) => void;
}

/**
 * The retry budget: retries at most 20% of the first attempts over 10 s, and 10 per 10 s however
 * few the requests. With every request failing, the service then gets at most 1.2 requests per
 * call (plus the 10).
 */
const RETRY_BUDGET = { ratio: 0.2, minRetries: 10, windowMs: 10_000 };
const DEFAULT_RETRY = { retries: 2, retryAfterMaxMs: 2_000 };
const DEFAULT_BREAKER = { failureThreshold: 5, openMs: 5_000 };

/**
 * The one way the gateway reaches the Business-Signals service, shared by all operations: the
 * transport wrapped in its policies. Per-caller state (the key, the ledger) comes with each call.
 */
export interface Upstream {
  call: UpstreamCall;
  /** The circuit breaker's state now (`/readyz` is not ready while it is open). */
  breakerState(): BreakerState;
  /** Told of each change of the breaker's state. */
  onBreakerChange(listener: (state: BreakerState) => void): void;
  /**
   * Resolves once the shared cache is connected, or after `timeoutMs` without it (the gateway then
   * serves from the service until it connects). At once without one.
   */
  ready(timeoutMs: number): Promise<void>;
  /** Closes the connections to the service and to the shared cache. */
  close(): Promise<void>;
}

/** Wraps `call` in `policies`, the first innermost: `wrap(t, a, b)` is `b(a(t))`. */
export function wrap(call: UpstreamCall, ...policies: UpstreamPolicy[]): UpstreamCall {
  return policies.reduce((inner, policy) => policy(inner), call);
}

/**
 * Builds the upstream pipeline. Every upstream request passes here, from the transport outward:
 *
 *   transport → breaker → retry → cache → coalescing → budget
 *
 * The budget is outermost, so that a page the cache or a joined request serves settles to 0
 * credits; coalescing is outside the cache, so that concurrent calls for a page look it up once.
 * Each policy is a file of its own in `policies/` with the {@link UpstreamPolicy} signature.
 */
export function createUpstream(options: UpstreamOptions): Upstream {
  const transport = createTransport(options);
  const cache = options.cache && options.cache.ttlMs > 0 ? options.cache : null;
  const store = cache ? createPageStore(cache, options.timeoutMs) : null;
  const caching = store ? [cachePolicy(store, { claimMs: options.timeoutMs }), coalescePolicy] : [];
  const breaker = new CircuitBreaker(options.breaker ?? DEFAULT_BREAKER);
  const retry = retryPolicy({
    ...(options.retry ?? DEFAULT_RETRY),
    budget: new RetryBudget(RETRY_BUDGET),
    onRetry: options.onRetry,
  });
  return {
    call: wrap(transport.call, breaker.policy, retry, ...caching, budgetPolicy),
    breakerState: () => breaker.state,
    onBreakerChange: (listener) => breaker.onChange(listener),
    ready: async (timeoutMs) => store?.ready(timeoutMs),
    async close() {
      await Promise.all([transport.close(), store?.close()]);
    },
  };
}
