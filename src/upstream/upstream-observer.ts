import type { EndpointName } from './endpoints.js';
import type { BreakerEvents } from './circuit-breaker.js';
import type { UpstreamFailure } from './upstream-error.js';

/** One HTTP exchange with the service, as it ended. */
export interface Exchange {
  readonly endpoint: EndpointName;
  /** The HTTP status, or 0 when no response arrived (timeout, network error, abort). */
  readonly status: number;
  /** What went wrong; absent on success. */
  readonly failure?: UpstreamFailure;
  /** From sending the request to the end of its body. */
  readonly seconds: number;
  /** Credits the service charged for it (0 unless it succeeded). */
  readonly credits: number;
  /** The service's `meta.requestId` of an error, to quote to its support. */
  readonly requestId?: string;
}

/**
 * Told what the upstream pipeline does, for metrics and logs; every method optional, none may
 * throw. Nothing here carries a caller's key, filters or cursor: only the endpoint and facts.
 * Each policy names the events it tells (`observe`: exchange; `cache`: served, cacheMiss;
 * `coalesce`: served; `stale`: served; `retry`: retry; the breaker's circuit: breaker).
 */
export interface UpstreamObserver extends BreakerEvents {
  /** Each exchange with the service (every attempt of a retried call is one). */
  exchange?(exchange: Exchange): void;
  /**
   * A page served without a request: from the cache, by joining another call's request, or kept
   * past its TTL in place of a request the service failed (`stale`).
   */
  served?(endpoint: EndpointName, credits: number, source: 'cache' | 'joined' | 'stale'): void;
  /** The cache had no page for a call, which goes on to the service. */
  cacheMiss?(endpoint: EndpointName): void;
  /** A retry is about to wait and go, with its reason (`timeout`, `reset`, `503`, `429`...). */
  retry?(reason: string): void;
}

/** One observer that tells each of `observers` in turn. */
export function observeAll(...observers: UpstreamObserver[]): UpstreamObserver {
  return {
    exchange: (exchange) => observers.forEach((o) => o.exchange?.(exchange)),
    served: (endpoint, credits, source) =>
      observers.forEach((o) => o.served?.(endpoint, credits, source)),
    cacheMiss: (endpoint) => observers.forEach((o) => o.cacheMiss?.(endpoint)),
    retry: (reason) => observers.forEach((o) => o.retry?.(reason)),
    breaker: (state) => observers.forEach((o) => o.breaker?.(state)),
  };
}
