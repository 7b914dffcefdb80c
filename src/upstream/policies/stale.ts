import { creditsOf } from '../../credits/credit-ledger.js';
import { pageKey } from '../page-cache/page-key.js';
import type { PageStore } from '../page-cache/page-store.js';
import type { UpstreamPolicy } from '../upstream-call.js';
import { UpstreamError } from '../upstream-error.js';
import type { UpstreamObserver } from '../upstream-observer.js';

/** The events of {@link stale}: each page it serves (`served`, from `stale`). */
export type StaleEvents = Pick<UpstreamObserver, 'served'>;

/**
 * Answers an outage with the page kept: when a call fails because the service is down
 * (`UpstreamError.outage`: a 5xx, a timeout, a refused or reset connection, the breaker open)
 * and `store` still holds the page of the same key, expired less than the stale window
 * (`CACHE_STALE_SECONDS`) ago, that page is the answer. It costs nothing: the call books its
 * credits as saved, and the page as stale with its age (`extensions.stale`). A 4xx (400, 401,
 * 402, 403, 429) is the caller's to see, and is never hidden; `fresh` (`Cache-Control: no-cache`)
 * refuses stale pages. Events: `served`.
 */
export function stale(store: PageStore, events?: StaleEvents): UpstreamPolicy {
  return (next) => async (request) => {
    try {
      return await next(request);
    } catch (error) {
      if (request.fresh || !(error instanceof UpstreamError) || !error.outage) throw error;
      const kept = await store.getStale(pageKey(request));
      if (!kept) throw error;
      const { page, ageMs } = kept;
      request.ledger.served(page.envelope, page.receivedAt);
      request.ledger.servedStale({ endpoint: request.endpoint, ageMs });
      events?.served?.(request.endpoint, creditsOf(page.envelope), 'stale');
      return page;
    }
  };
}
