import type { UpstreamPolicy } from '../upstream-call.js';

/**
 * Books each request in the call's ledger as it is sent, and the credits the service charged as
 * its envelope arrives. It wraps the transport directly, so that it books every request actually
 * sent (each retry) and nothing served without one (a cached or joined page, a breaker refusal).
 */
export function ledger(): UpstreamPolicy {
  return (next) => async (request) => {
    request.ledger.sent();
    const page = await next(request);
    request.ledger.charged(page.envelope);
    return page;
  };
}
