import { LRUCache } from 'lru-cache';
import type { CachedPage, PageStore, StalePage, StoredAnswer } from './page-store.js';

/** Freezes a cached envelope: pages are shared by operations, and none may change another's. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** An answer's name in the LRU, apart from every page's (a page key starts with a key hash). */
const ANSWER = 'answer\n';

/** What an answer weighs in the LRU's bound: its bytes, headers and key. */
function answerSize(answer: StoredAnswer, key: string): number {
  let size = answer.data.length + key.length + 64;
  for (const [name, value] of answer.headers) size += name.length + value.length;
  return size;
}

/**
 * The embedded page cache: an LRU bounded by the bytes of the response bodies it holds (plus the
 * keys), entries kept for the TTL and the stale window, served by `get` for the TTL only. Pages
 * are kept parsed and frozen, so a hit costs no parse. Whole answers share the LRU and its bound,
 * each kept as long as its oldest page is fresh.
 */
export class MemoryPageStore implements PageStore {
  readonly #pages: LRUCache<string, CachedPage | StoredAnswer>;
  readonly #ttlMs: number;
  readonly #keptMs: number;

  /** `staleMs`: how long a page is kept past `ttlMs` for `getStale` (default 0: not at all). */
  constructor(options: { ttlMs: number; staleMs?: number; maxBytes: number }) {
    this.#ttlMs = options.ttlMs;
    this.#keptMs = options.ttlMs + (options.staleMs ?? 0);
    this.#pages = new LRUCache<string, CachedPage | StoredAnswer>({
      ttl: this.#keptMs,
      maxSize: options.maxBytes,
      sizeCalculation: (entry, key) =>
        'envelope' in entry ? Math.max(1, entry.bytes + key.length) : answerSize(entry, key),
      // Expired pages are dropped as they are read, not by a timer per entry.
      ttlAutopurge: false,
    });
  }

  async get(key: string): Promise<CachedPage | undefined> {
    const page = this.#page(key);
    return page && this.#ageMs(key) < this.#ttlMs ? page : undefined;
  }

  async getStale(key: string): Promise<StalePage | undefined> {
    const page = this.#page(key);
    return page && { page, ageMs: this.#ageMs(key) };
  }

  #page(key: string): CachedPage | undefined {
    const entry = this.#pages.get(key);
    return entry && 'envelope' in entry ? entry : undefined;
  }

  /** Synchronous: a repeat view served from memory waits for nothing. */
  getAnswer(key: string): StoredAnswer | undefined {
    const entry = this.#pages.get(ANSWER + key);
    return entry && !('envelope' in entry) ? entry : undefined;
  }

  setAnswer(key: string, answer: StoredAnswer, ttlMs: number): void {
    if (ttlMs > 0) this.#pages.set(ANSWER + key, answer, { ttl: ttlMs });
  }

  /** Since the page under `key` (there) was stored, on the LRU's own clock. */
  #ageMs(key: string): number {
    return this.#keptMs - this.#pages.getRemainingTTL(key);
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
