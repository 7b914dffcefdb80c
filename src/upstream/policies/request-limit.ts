import type { UpstreamPolicy } from '../upstream-call.js';
import { UpstreamError } from '../upstream-error.js';

/**
 * The operation's bound on upstream requests (`MAX_UPSTREAM_REQUESTS`), kept while it runs: once
 * its ledger holds that many requests sent (retries and lookups that found nothing included), a
 * further call fails UPSTREAM_REQUESTS_EXCEEDED (failure `request-limit`) and nothing is sent.
 * The estimate refuses most such operations before they run; this stops the rest.
 */
export function requestLimit(limit: number): UpstreamPolicy {
  return (next) => (request) => {
    if (request.ledger.requests < limit) return next(request);
    return Promise.reject(
      new UpstreamError(
        `Not fetched: this operation has sent its ${limit} upstream requests (MAX_UPSTREAM_REQUESTS). Ask for fewer lookups or lists.`,
        { code: 'UPSTREAM_REQUESTS_EXCEEDED', failure: 'request-limit' },
      ),
    );
  };
}
