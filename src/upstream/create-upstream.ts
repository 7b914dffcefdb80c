import { defaultConfig } from '../config.js';
import { createPageStore, type PageCacheOptions } from './page-cache/create-page-store.js';
import { budgetPolicy } from './policies/budget.js';
import { CircuitBreaker, type BreakerOptions, type BreakerState } from './policies/breaker.js';
import { cachePolicy } from './policies/cache.js';
import { coalescePolicy } from './policies/coalesce.js';
import { ledger } from './policies/ledger.js';
import { observePolicy } from './policies/observe.js';
import { retryPolicy } from './policies/retry.js';
import { RETRY_BUDGET, RetryBudget } from './retry-budget.js';
import { createTransport, type TransportOptions } from './transport.js';
import type { UpstreamCall, UpstreamPolicy } from './upstream-call.js';
import type { UpstreamObserver } from './upstream-observer.js';

/** Options of {@link createUpstream}. */
export interface UpstreamOptions extends TransportOptions {
  /** The page cache; absent, or with a TTL of 0, pages are neither cached nor joined. */
  cache?: PageCacheOptions;
  /** Retries (`UPSTREAM_RETRIES`, `RETRY_AFTER_MAX_MS`); absent, those settings' defaults. */
  retry?: { retries: number; retryAfterMaxMs: number };
  /** The circuit breaker (`BREAKER_FAILURES`, `BREAKER_OPEN_MS`); absent, their defaults. */
  breaker?: BreakerOptions;
  /** Told of exchanges, cache hits and misses, retries and breaker changes (metrics, logs). */
  observer?: UpstreamObserver;
}

/** Without options, the settings' own defaults (`src/config.ts` declares them once). */
const DEFAULT_RETRY = {
  retries: defaultConfig.upstreamRetries,
  retryAfterMaxMs: defaultConfig.retryAfterMaxMs,
};
const DEFAULT_BREAKER = {
  failureThreshold: defaultConfig.breakerFailures,
  openMs: defaultConfig.breakerOpenMs,
};

/**
 * The one way the gateway reaches the Business-Signals service, shared by all operations: the
 * transport wrapped in its policies. Per-caller state (the key, the ledger) comes with each call.
 */
export interface Upstream {
  call: UpstreamCall;
  /** The circuit breaker's state now (`/readyz` is not ready while it is open). */
  breakerState(): BreakerState;
  /** Bytes of pages the in-memory cache holds; undefined without one (off, or in Redis). */
  cacheBytes(): number | undefined;
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
 *   transport → ledger → observe → breaker → retry → cache → coalescing → budget
 *
 * The budget is outermost, so that a page the cache or a joined request serves settles to 0
 * credits; coalescing is outside the cache, so that concurrent calls for a page look it up once.
 * Each policy is a file of its own in `policies/` with the {@link UpstreamPolicy} signature.
 */
export function createUpstream(options: UpstreamOptions): Upstream {
  const transport = createTransport(options);
  const cache = options.cache && options.cache.ttlMs > 0 ? options.cache : null;
  const store = cache ? createPageStore(cache, options.timeoutMs) : null;
  const observer = options.observer ?? {};
  const caching = store
    ? [cachePolicy(store, { claimMs: options.timeoutMs, observer }), coalescePolicy(observer)]
    : [];
  const breaker = new CircuitBreaker(options.breaker ?? DEFAULT_BREAKER);
  if (observer.breaker) breaker.onChange(observer.breaker);
  const retry = retryPolicy({
    ...(options.retry ?? DEFAULT_RETRY),
    budget: new RetryBudget(RETRY_BUDGET),
    onRetry: observer.retry,
  });
  return {
    call: wrap(
      transport.call,
      ledger(),
      observePolicy(observer),
      breaker.policy,
      retry,
      ...caching,
      budgetPolicy,
    ),
    breakerState: () => breaker.state,
    cacheBytes: () => store?.bytesHeld(),
    ready: async (timeoutMs) => store?.ready(timeoutMs),
    async close() {
      await Promise.all([transport.close(), store?.close()]);
    },
  };
}
