import type { UpstreamPolicy } from '../upstream-call.js';
import { UpstreamError } from '../upstream-error.js';

/**
 * A call without the caller's key (an empty `apiKey`: the HTTP request carried none) fails
 * UNAUTHORIZED, failure `no-key`, and nothing is sent.
 */
export function requireKey(): UpstreamPolicy {
  return (next) => (request) => {
    if (request.apiKey) return next(request);
    return Promise.reject(
      new UpstreamError(
        'This field calls the Business-Signals API: send your API key in the X-API-Key header (or Authorization: Bearer <key>).',
        { code: 'UNAUTHORIZED', failure: 'no-key' },
      ),
    );
  };
}
