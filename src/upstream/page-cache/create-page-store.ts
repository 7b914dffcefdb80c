import { DEFAULT_CURSOR_SECRET } from '../../config.js';
import { MemoryPageStore } from './memory-page-store.js';
import type { PageStore } from './page-store.js';
import { RedisPageStore } from './redis-page-store.js';
import { TieredPageStore } from './tiered-page-store.js';
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
  /** Bound of the memory store (with Redis, of the tier in memory): bytes of the bodies held. */
  maxBytes: number;
  /**
   * The process's link to the shared Redis: the cache lives there too, shared by the instances,
   * behind this process's memory.
   */
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
 * The store the options name: with a link to Redis, memory in front of Redis; else memory alone,
 * bounded alike. `claimMs` bounds a claim on a page's fetch (the whole call, retries included);
 * `upstream` is the service's URL, which the shared cache keeps its pages under.
 */
export function createPageStore(
  options: PageCacheOptions,
  { claimMs, upstream }: { claimMs: number; upstream: string },
): PageStore {
  const local = new MemoryPageStore(options);
  const { link } = options;
  if (!link) return local;
  const shared = new RedisPageStore({
    link,
    ttlMs: options.ttlMs,
    staleMs: options.staleMs ?? 0,
    claimMs,
    upstream,
    secret: options.secret ?? DEFAULT_CURSOR_SECRET,
    onError: throttled(options.onError ?? ((message) => console.warn(message))),
  });
  return new TieredPageStore({ local, shared, link, ttlMs: options.ttlMs });
}
