import { pageKey } from '../page-cache/page-key.js';
import type { UpstreamPage, UpstreamPolicy } from '../upstream-call.js';

/** An operation's pages by page key: what {@link dedupe} keeps, made per operation. */
export type OperationPages = Map<string, Promise<UpstreamPage>>;

/**
 * The same page asked twice in one operation (by {@link pageKey}, as the cache names it) is
 * fetched once: the second call gets the first's promise, settled or not, success or failure.
 */
export function dedupe(pages: OperationPages): UpstreamPolicy {
  return (next) => (request) => {
    const key = pageKey(request);
    let pending = pages.get(key);
    if (!pending) {
      pending = next(request);
      pages.set(key, pending);
    }
    return pending;
  };
}
