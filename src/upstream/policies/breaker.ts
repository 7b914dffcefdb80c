import type { CircuitBreaker } from '../circuit-breaker.js';
import type { UpstreamPolicy } from '../upstream-call.js';
import { UpstreamError } from '../upstream-error.js';

/**
 * The circuit breaker: while `circuit` is open, a call fails at once (UPSTREAM_UNAVAILABLE with
 * `retryAfter`) and sends nothing. A failure of the service counts (no answer in time, a refused
 * or reset connection, a 5xx, a malformed body); an answer that is the caller's (400, 401, 402,
 * 403, 429) or a call its client aborted does not, and any success resets the run. It wraps the
 * transport, inside the retries, so that it sees every attempt. Events: the circuit's (`breaker`).
 */
export function breaker(circuit: CircuitBreaker): UpstreamPolicy {
  return (next) => (request) => {
    let probe: boolean;
    try {
      probe = circuit.admit();
    } catch (refusal) {
      return Promise.reject(refusal as Error);
    }
    return next(request).then(
      (page) => {
        circuit.succeeded();
        if (probe) circuit.probed();
        return page;
      },
      (error: unknown) => {
        // A call its client aborted tells nothing of the service.
        const aborted =
          request.signal?.aborted ||
          (error instanceof UpstreamError && error.failure === 'aborted');
        if (!aborted) {
          if (isServiceFailure(error)) circuit.failed();
          else circuit.succeeded();
        }
        if (probe) circuit.probed();
        throw error;
      },
    );
  };
}

/** A failure that says the service is unwell, rather than the caller or the client. */
function isServiceFailure(error: unknown): boolean {
  if (!(error instanceof UpstreamError)) return false;
  if (error.failure === 'malformed') return true;
  return error.retryable;
}
