import { LRUCache } from 'lru-cache';
import { ownerOf } from './page-key.js';
import type { CachedPage, PageStore, StalePage, StoredAnswer } from './page-store.js';

/** Freezes a cached envelope: pages are shared by operations, and none may change another's. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/**
 * The room whole answers get, as a share of the pages' bound, on top of it: pages save credits,
 * answers only the run that rebuilds them from cached pages, so answers never take the pages'.
 */
const ANSWERS_SHARE = 1 / 4;

/** The most of the answers' room one key's answers take: the rest stays with other keys'. */
const ANSWERS_PER_KEY_SHARE = 1 / 2;

/** What an answer weighs in its bound: its bytes, headers and key. */
function answerSize(answer: StoredAnswer, key: string): number {
  let size = answer.data.length + key.length + 64;
  for (const [name, value] of answer.headers) size += name.length + value.length;
  return size;
}

/** One key's answers, as the LRU of every key's holds them; a new holder each time it changes. */
interface KeyAnswers {
  readonly answers: LRUCache<string, StoredAnswer>;
}

/**
 * The embedded page cache: an LRU of pages bounded by the bytes of the response bodies it holds
 * (plus the keys), entries kept for the TTL and the stale window, served by `get` for the TTL
 * only. Pages are kept parsed and frozen, so a hit costs no parse. Whole answers live apart, in
 * {@link ANSWERS_SHARE} of that bound more, so that no answer ever pushes a page out: an LRU of
 * keys, each holding an LRU of that key's answers of at most {@link ANSWERS_PER_KEY_SHARE} of
 * the answers' room, each answer kept as long as its oldest page is fresh. `revoke` drops one
 * key's pages and answers.
 */
export class MemoryPageStore implements PageStore {
  readonly #pages: LRUCache<string, CachedPage>;
  /** Pages held per owner ({@link ownerOf}): `revoke` looks for none where there are none. */
  readonly #pagesOf = new Map<string, number>();
  readonly #answers: LRUCache<string, KeyAnswers>;
  readonly #answersPerKey: number;
  readonly #ttlMs: number;
  readonly #keptMs: number;

  /** `staleMs`: how long a page is kept past `ttlMs` for `getStale` (default 0: not at all). */
  constructor(options: { ttlMs: number; staleMs?: number; maxBytes: number }) {
    this.#ttlMs = options.ttlMs;
    this.#keptMs = options.ttlMs + (options.staleMs ?? 0);
    this.#pages = new LRUCache<string, CachedPage>({
      ttl: this.#keptMs,
      maxSize: options.maxBytes,
      sizeCalculation: (page, key) => Math.max(1, page.bytes + key.length),
      // Expired pages are dropped as they are read, not by a timer per entry.
      ttlAutopurge: false,
      onInsert: (_page, key, reason) => {
        if (reason === 'add') this.#count(ownerOf(key), 1);
      },
      dispose: (_page, key, reason) => {
        if (reason !== 'set') this.#count(ownerOf(key), -1);
      },
    });
    const answersBytes = Math.max(1, Math.floor(options.maxBytes * ANSWERS_SHARE));
    this.#answersPerKey = Math.max(1, Math.floor(answersBytes * ANSWERS_PER_KEY_SHARE));
    this.#answers = new LRUCache<string, KeyAnswers>({
      maxSize: answersBytes,
      sizeCalculation: (held) => Math.max(1, held.answers.calculatedSize),
    });
  }

  #count(owner: string, change: number): void {
    const count = (this.#pagesOf.get(owner) ?? 0) + change;
    if (count > 0) this.#pagesOf.set(owner, count);
    else this.#pagesOf.delete(owner);
  }

  async get(key: string): Promise<CachedPage | undefined> {
    const page = this.#pages.get(key);
    return page && this.#ageMs(key) < this.#ttlMs ? page : undefined;
  }

  async getStale(key: string): Promise<StalePage | undefined> {
    const page = this.#pages.get(key);
    return page && { page, ageMs: this.#ageMs(key) };
  }

  /** Synchronous: a repeat view served from memory waits for nothing. */
  getAnswer(key: string): StoredAnswer | undefined {
    return this.#answers.get(ownerOf(key))?.answers.get(key);
  }

  setAnswer(key: string, answer: StoredAnswer, ttlMs: number): void {
    if (ttlMs <= 0) return;
    const owner = ownerOf(key);
    const answers =
      this.#answers.get(owner)?.answers ??
      new LRUCache<string, StoredAnswer>({
        maxSize: this.#answersPerKey,
        sizeCalculation: answerSize,
        ttlAutopurge: false,
      });
    // Past its share, a key makes room from its own least recently used answers.
    answers.set(key, answer, { ttl: ttlMs });
    // A new holder, so that the LRU of keys weighs this key's answers again (and makes room, if
    // need be, from the least recently used other keys').
    if (answers.size > 0) this.#answers.set(owner, { answers });
    else this.#answers.delete(owner);
  }

  /** Since the page under `key` (there) was stored, on the LRU's own clock. */
  #ageMs(key: string): number {
    return this.#keptMs - this.#pages.getRemainingTTL(key);
  }

  /**
   * `ageMs`: how long ago the page was stored where it is copied from (a copy of Redis's keeps its
   * age, so that it expires when that does); 0 for a page fetched now.
   */
  set(key: string, page: CachedPage, ageMs = 0): void {
    const ttl = this.#keptMs - ageMs;
    if (ttl <= 0) return;
    deepFreeze(page.envelope);
    this.#pages.set(key, page, { ttl });
  }

  revoke(owner: string): void {
    this.#answers.delete(owner);
    if (!this.#pagesOf.has(owner)) return;
    const prefix = `${owner}\n`;
    const gone = [...this.#pages.keys()].filter((key) => key.startsWith(prefix));
    for (const key of gone) this.#pages.delete(key);
  }

  async claim(): Promise<boolean> {
    return true;
  }

  release(): void {}

  async awaitPage(): Promise<CachedPage | undefined> {
    return undefined;
  }

  async ready(): Promise<void> {}

  /** Bytes of pages and answers held. */
  bytesHeld(): number {
    return this.#pages.calculatedSize + this.#answers.calculatedSize;
  }

  async close(): Promise<void> {
    this.#pages.clear();
    this.#answers.clear();
  }
}
