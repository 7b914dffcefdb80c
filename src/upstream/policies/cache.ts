import { creditsOf } from '../../credits/credit-ledger.js';
import { keyHash, pageKey } from '../page-cache/page-key.js';
import type { PageStore } from '../page-cache/page-store.js';
import type { UpstreamPolicy } from '../upstream-call.js';
import { UpstreamError } from '../upstream-error.js';
import type { UpstreamObserver } from '../upstream-observer.js';

/** The events of {@link cache}: each page it serves (`served`, from `cache`), each miss. */
export type CacheEvents = Pick<UpstreamObserver, 'served' | 'cacheMiss'>;

/** Options of {@link cache}. */
export interface CacheOptions {
  /** How long a call waits for a page another instance claimed before it fetches it itself. */
  claimMs: number;
  events?: CacheEvents;
}

/**
 * Serves a page from `store` when it holds one for the same key, endpoint, query, cursor and
 * limit ({@link pageKey}), younger than the TTL; the call books its credits as saved. Otherwise
 * fetches it and stores it: only complete 2xx pages reach here, errors reject and are never stored.
 *
 * Among instances sharing a store, one fetches a page at a time: the others wait up to `claimMs`
 * for it to be stored, then fetch it themselves. `fresh` (`Cache-Control: no-cache`) skips the
 * lookup and the claim, fetches, and refreshes the stored page. Events: `served`, `cacheMiss`.
 *
 * The service's 401 for a key (a revoked key) drops everything stored for it, pages and whole
 * answers, before the call fails: nothing kept is served for the key until it succeeds again. A
 * 402 drops nothing: what was stored was paid for.
 */
export function cache(store: PageStore, options: CacheOptions): UpstreamPolicy {
  const { events } = options;
  return (next) => async (request) => {
    const key = pageKey(request);
    let claimed = false;
    if (!request.fresh) {
      const cached = await store.get(key);
      if (cached) {
        request.ledger.served(cached.envelope, cached.receivedAt);
        events?.served?.(request.endpoint, creditsOf(cached.envelope), 'cache');
        return cached;
      }
      claimed = await store.claim(key);
      if (!claimed) {
        const deadline = Date.now() + options.claimMs;
        const stored = await store.awaitPage(key, deadline, request.signal);
        if (stored) {
          request.ledger.served(stored.envelope, stored.receivedAt);
          events?.served?.(request.endpoint, creditsOf(stored.envelope), 'cache');
          return stored;
        }
      }
      events?.cacheMiss?.(request.endpoint);
    }
    try {
      const page = await next(request);
      // An empty page (a lookup that found nothing, mostly) is not kept: kept, a flood of unknown
      // ids would push every workspace's pages out of the cache for nothing saved.
      if (page.envelope.data.length > 0) {
        await store.set(key, {
          envelope: page.envelope,
          bytes: page.bytes,
          receivedAt: Date.now(),
        });
      }
      return page;
    } catch (error) {
      if (error instanceof UpstreamError && error.failure === 'status' && error.status === 401) {
        await store.revoke(keyHash(request.apiKey));
      }
      throw error;
    } finally {
      if (claimed) store.release(key);
    }
  };
}
