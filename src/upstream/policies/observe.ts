import { creditsOf } from '../../credits/credit-ledger.js';
import type { EndpointName } from '../endpoints.js';
import type { UpstreamPage, UpstreamPolicy } from '../upstream-call.js';
import { UpstreamError } from '../upstream-error.js';
import type { Exchange, UpstreamObserver } from '../upstream-observer.js';

/** The events of {@link observe}: each exchange with the service (`exchange`). */
export type ObserveEvents = Pick<UpstreamObserver, 'exchange'>;

/** An exchange that ended with `page`, `seconds` after it was sent. */
export function answered(endpoint: EndpointName, page: UpstreamPage, seconds: number): Exchange {
  return { endpoint, status: 200, seconds, credits: creditsOf(page.envelope) };
}

/** An exchange that ended with `error` (an `UpstreamError`'s facts; anything else: network). */
export function failed(endpoint: EndpointName, error: unknown, seconds: number): Exchange {
  const facts = error instanceof UpstreamError ? error : undefined;
  return {
    endpoint,
    status: facts?.status ?? 0,
    failure: facts?.failure ?? 'network',
    seconds,
    credits: 0,
    requestId: facts?.requestId,
  };
}

/**
 * Tells of each exchange with the service: endpoint, status, failure, duration and credits. It
 * wraps the transport, inside the breaker, so that it sees every request actually sent (each
 * retry) and nothing the breaker refused. Events: `exchange`.
 */
export function observe(events: ObserveEvents): UpstreamPolicy {
  const tell = events.exchange;
  if (!tell) return (next) => next;
  return (next) => (request) => {
    const started = performance.now();
    return next(request).then(
      (page) => {
        tell(answered(request.endpoint, page, (performance.now() - started) / 1000));
        return page;
      },
      (error: unknown) => {
        tell(failed(request.endpoint, error, (performance.now() - started) / 1000));
        throw error;
      },
    );
  };
}
