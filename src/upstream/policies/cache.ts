import { creditsOf } from '../credit-ledger.js';
import { pageKey } from '../page-cache/page-key.js';
import type { PageStore } from '../page-cache/page-store.js';
import type { UpstreamPolicy } from '../upstream-call.js';
import type { UpstreamObserver } from '../upstream-observer.js';

/**
 * Serves a page from `store` when it holds one for the same key, endpoint, query, cursor and
 * limit, younger than the TTL; the call books its credits as saved. Otherwise fetches it and
 * stores it: only complete 2xx envelopes reach here, errors reject and are never stored.
 *
 * Among instances sharing a store, one fetches a page at a time: the others wait up to `claimMs`
 * for it to be stored, then fetch it themselves. `fresh` (`Cache-Control: no-cache`) skips the
 * lookup and the claim, fetches, and refreshes the stored page. `observer` hears of each hit
 * (`served`) and miss.
 */
export function cachePolicy(
  store: PageStore,
  options: { claimMs: number; observer?: UpstreamObserver },
): UpstreamPolicy {
  const { observer } = options;
  return (next) => async (request) => {
    const key = pageKey(request);
    let claimed = false;
    if (!request.fresh) {
      const cached = await store.get(key);
      if (cached) {
        request.ledger.served(cached.envelope, cached.receivedAt);
        observer?.served?.(request.endpoint, creditsOf(cached.envelope), 'cache');
        return cached;
      }
      claimed = await store.claim(key);
      if (!claimed) {
        const deadline = Date.now() + options.claimMs;
        const stored = await store.awaitPage(key, deadline, request.signal);
        if (stored) {
          request.ledger.served(stored.envelope, stored.receivedAt);
          observer?.served?.(request.endpoint, creditsOf(stored.envelope), 'cache');
          return stored;
        }
      }
      observer?.cacheMiss?.(request.endpoint);
    }
    try {
      const page = await next(request);
      store.set(key, { envelope: page.envelope, bytes: page.bytes, receivedAt: Date.now() });
      return page;
    } finally {
      if (claimed) store.release(key);
    }
  };
}
