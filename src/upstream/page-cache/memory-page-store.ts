import { LRUCache } from 'lru-cache';
import type { CachedPage, PageStore } from './page-store.js';

/** Freezes a cached envelope: pages are shared by operations, and none may change another's. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/**
 * The embedded page cache: an LRU bounded by the bytes of the response bodies it holds (plus the
 * keys), entries expiring after the TTL. Pages are kept parsed and frozen, so a hit costs no parse.
 */
export class MemoryPageStore implements PageStore {
  readonly #pages: LRUCache<string, CachedPage>;

  constructor(options: { ttlMs: number; maxBytes: number }) {
    this.#pages = new LRUCache<string, CachedPage>({
      ttl: options.ttlMs,
      maxSize: options.maxBytes,
      sizeCalculation: (page, key) => Math.max(1, page.bytes + key.length),
      // Expired pages are dropped as they are read, not by a timer per entry.
      ttlAutopurge: false,
    });
  }

  async get(key: string): Promise<CachedPage | undefined> {
    return this.#pages.get(key);
  }

  set(key: string, page: CachedPage): void {
    deepFreeze(page.envelope);
    this.#pages.set(key, page);
  }

  async claim(): Promise<boolean> {
    return true;
  }

  release(): void {}

  async awaitPage(): Promise<CachedPage | undefined> {
    return undefined;
  }

  async ready(): Promise<void> {}

  bytesHeld(): number {
    return this.#pages.calculatedSize;
  }

  async close(): Promise<void> {
    this.#pages.clear();
  }
}
