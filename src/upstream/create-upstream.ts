import { defaultConfig } from '../config.js';
import { CircuitBreaker, type BreakerOptions, type BreakerState } from './circuit-breaker.js';
import type { SharedPipeline } from './operation-call.js';
import { callDurationBound } from './policies/retry.js';
import { createPageStore, type PageCacheOptions } from './page-cache/create-page-store.js';
import { RETRY_BUDGET, RetryBudget } from './retry-budget.js';
import { createTransport, type TransportOptions } from './transport.js';
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
 * transport and the state of the policies around it. Each operation composes its call from it
 * (`operationCall`, through its `UpstreamSession`); per-caller state comes with each call.
 */
export interface Upstream {
  readonly shared: SharedPipeline;
  /** The circuit breaker's state now (`/readyz` is not ready while it is open). */
  breakerState(): BreakerState;
  /** Bytes of pages the cache holds in memory (with Redis, its tier in memory); undefined when off. */
  cacheBytes(): number | undefined;
  /** Requests waiting now for a connection to the service: the gateway's own load. */
  queued(): number;
  /**
   * Resolves once the shared cache is connected, or after `timeoutMs` without it (the gateway then
   * serves from the service until it connects). At once without one.
   */
  ready(timeoutMs: number): Promise<void>;
  /** Closes the connections to the service and to the shared cache. */
  close(): Promise<void>;
}

/**
 * Builds what the upstream pipeline shares: the transport (its pool), the circuit, the retry
 * budget, the page store and the table of requests in flight. The pipeline itself, in its order,
 * is `operationCall` (`operation-call.ts`).
 */
export function createUpstream(options: UpstreamOptions): Upstream {
  const transport = createTransport(options);
  const cacheOptions = options.cache && options.cache.ttlMs > 0 ? options.cache : null;
  const retryOptions = options.retry ?? DEFAULT_RETRY;
  const claimMs = callDurationBound(options.timeoutMs, retryOptions);
  const store = cacheOptions
    ? createPageStore(cacheOptions, { claimMs, upstream: options.baseUrl })
    : null;
  const observer = options.observer ?? {};
  const circuit = new CircuitBreaker(options.breaker ?? DEFAULT_BREAKER, observer);
  const shared: SharedPipeline = {
    transport: transport.call,
    observer,
    circuit,
    retry: {
      ...retryOptions,
      budget: new RetryBudget(RETRY_BUDGET),
      events: observer,
    },
    cache: store
      ? { store, claimMs, flights: new Map(), keepsStale: (cacheOptions?.staleMs ?? 0) > 0 }
      : null,
  };
  return {
    shared,
    breakerState: () => circuit.state,
    cacheBytes: () => store?.bytesHeld(),
    queued: () => transport.queued(),
    ready: async (timeoutMs) => store?.ready(timeoutMs),
    async close() {
      await Promise.all([transport.close(), store?.close()]);
    },
  };
}
