import type { UpstreamPolicy } from '../upstream-call.js';
import { UpstreamError, type UpstreamFailure } from '../upstream-error.js';

/** Failures of a request that was sent, after which the service may still have charged it. */
const MAY_HAVE_CHARGED: ReadonlySet<UpstreamFailure> = new Set(['timeout', 'aborted']);

/**
 * Books each request in the call's ledger as it is sent, and the credits the service charged as
 * its envelope arrives. It wraps the transport directly, so that it books every request actually
 * sent (each retry) and nothing served without one (a cached or joined page, a breaker refusal).
 * An attempt that timed out, or was aborted once sent, is booked as possibly charged, up to its
 * limit (`uncertain`).
 */
export function ledger(): UpstreamPolicy {
  return (next) => (request) => {
    request.ledger.sent();
    return next(request).then(
      (page) => {
        request.ledger.charged(page.envelope);
        return page;
      },
      (error: unknown) => {
        // Sent, and not answered in time or given up (the client went away, the operation's
        // deadline passed): the service may have answered, and charged, after.
        if (error instanceof UpstreamError && MAY_HAVE_CHARGED.has(error.failure)) {
          request.ledger.mayHaveCharged(request.limit);
        }
        throw error;
      },
    );
  };
}
