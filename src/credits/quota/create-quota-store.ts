import { MemoryQuotaStore } from './memory-quota-store.js';
import type { QuotaObserver, QuotaStore } from './quota-store.js';
import { RedisQuotaStore } from './redis-quota-store.js';
import type { RedisLink } from '../../redis/redis-link.js';

/** Options of {@link createQuotaStore}. */
export interface QuotaStoreOptions {
  /** The link to the shared Redis (`REDIS_URL`, or `CACHE_URL`); absent, each instance keeps its own. */
  link?: RedisLink;
  /** Signs principals in Redis names (`CURSOR_SECRET`). */
  secret: string;
  /** The service's base URL (Redis names are kept under its prefix). */
  upstream: string;
  observer: QuotaObserver;
}

/** Buckets in Redis, shared by every instance, with a URL; else in this process's memory. */
export function createQuotaStore(options: QuotaStoreOptions): QuotaStore {
  if (!options.link) return new MemoryQuotaStore();
  return new RedisQuotaStore({ ...options, link: options.link });
}
