import { DEFAULT_CURSOR_SECRET } from '../../config.js';
import { MemoryPageStore } from './memory-page-store.js';
import type { PageStore } from './page-store.js';
import { RedisPageStore } from './redis-page-store.js';
import type { RedisLink } from '../../redis/redis-link.js';

/** Options of the page cache (`CACHE_*` settings). */
export interface PageCacheOptions {
  /** How long a page is served from the cache; 0 turns the cache (and joining) off. */
  ttlMs: number;
  /**
   * How long a page is kept past its TTL, to be served while the service is down
   * (`CACHE_STALE_SECONDS`); absent or 0, not at all.
   */
  staleMs?: number;
  /** Bound of the memory store: bytes of the bodies held. */
  maxBytes: number;
  /** The process's link to the shared Redis: the cache lives there, shared by the instances. */
  link?: RedisLink;
  /** Told when the shared cache fails (at most one message per {@link ERROR_REPORT_MS}). */
  onError?: (message: string) => void;
  /** The key shared-cache names are signed with (`CURSOR_SECRET`). */
  secret?: string;
}

/** Redis failures come in bursts (every command while it is down): one line per 30 s. */
const ERROR_REPORT_MS = 30_000;

/** `report`, at most once per {@link ERROR_REPORT_MS}, with a count of the messages dropped. */
export function throttled(report: (message: string) => void) {
  let last = -Infinity;
  let dropped = 0;
  return (message: string) => {
    const now = Date.now();
    if (now - last < ERROR_REPORT_MS) {
      dropped++;
      return;
    }
    report(
      dropped > 0 ? `${message} (and ${dropped} more failures since the last report)` : message,
    );
    last = now;
    dropped = 0;
  };
}

/**
 * The store the options name: Redis with a URL, else memory. `claimMs` bounds a claim on a page's
 * fetch (the whole call, retries included); `upstream` is the service's URL, which the shared
 * cache keeps its pages under.
 */
export function createPageStore(
  options: PageCacheOptions,
  { claimMs, upstream }: { claimMs: number; upstream: string },
): PageStore {
  if (!options.link) return new MemoryPageStore(options);
  return new RedisPageStore({
    link: options.link,
    ttlMs: options.ttlMs,
    staleMs: options.staleMs ?? 0,
    claimMs,
    upstream,
    secret: options.secret ?? DEFAULT_CURSOR_SECRET,
    onError: throttled(options.onError ?? ((message) => console.warn(message))),
  });
}
