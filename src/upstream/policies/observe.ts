import { creditsOf } from '../credit-ledger.js';
import type { UpstreamPolicy } from '../upstream-call.js';
import { UpstreamError } from '../upstream-error.js';
import type { UpstreamObserver } from '../upstream-observer.js';

/** The events of {@link observe}: each exchange with the service (`exchange`). */
export type ObserveEvents = Pick<UpstreamObserver, 'exchange'>;

/**
 * Tells of each exchange with the service: endpoint, status, failure, duration and credits. It
 * wraps the transport, inside the breaker, so that it sees every request actually sent (each
 * retry) and nothing the breaker refused. Events: `exchange`.
 */
export function observe(events: ObserveEvents): UpstreamPolicy {
  const tell = events.exchange;
  if (!tell) return (next) => next;
  return (next) => async (request) => {
    const started = performance.now();
    try {
      const page = await next(request);
      tell({
        endpoint: request.endpoint,
        status: 200,
        seconds: (performance.now() - started) / 1000,
        credits: creditsOf(page.envelope),
      });
      return page;
    } catch (error) {
      const facts = error instanceof UpstreamError ? error : undefined;
      tell({
        endpoint: request.endpoint,
        status: facts?.status ?? 0,
        failure: facts?.failure ?? 'network',
        seconds: (performance.now() - started) / 1000,
        credits: 0,
        requestId: facts?.requestId,
      });
      throw error;
    }
  };
}
