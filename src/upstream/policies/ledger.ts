import type { UpstreamPolicy } from '../upstream-call.js';
import { UpstreamError } from '../upstream-error.js';

/**
 * Books each request in the call's ledger as it is sent, and the credits the service charged as
 * its envelope arrives. It wraps the transport directly, so that it books every request actually
 * sent (each retry) and nothing served without one (a cached or joined page, a breaker refusal).
 * An attempt that timed out is booked as possibly charged, up to its limit (`uncertain`).
 */
export function ledger(): UpstreamPolicy {
  return (next) => async (request) => {
    request.ledger.sent();
    try {
      const page = await next(request);
      request.ledger.charged(page.envelope);
      return page;
    } catch (error) {
      // Sent and not answered in time: the service may have answered, and charged, after.
      if (error instanceof UpstreamError && error.failure === 'timeout') {
        request.ledger.mayHaveCharged(request.limit);
      }
      throw error;
    }
  };
}
