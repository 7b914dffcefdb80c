import type { RedisLink } from '../../redis/redis-link.js';
import type { MemoryPageStore } from './memory-page-store.js';
import { ownerOf } from './page-key.js';
import type { CachedPage, PageStore, StalePage, StoredAnswer } from './page-store.js';
import type { RedisPageStore } from './redis-page-store.js';

/** Options of {@link TieredPageStore}. */
export interface TieredPageStoreOptions {
  /** This process's tier, bounded as the memory cache is (`CACHE_MAX_MB`). */
  local: MemoryPageStore;
  /** The tier the instances share. */
  shared: RedisPageStore;
  /** The process's link to Redis: while it is down, the local tier serves alone. */
  link: RedisLink;
  /** How long a page is served (`CACHE_TTL_SECONDS`). */
  ttlMs: number;
}

/**
 * Owners whose epoch this process remembers; past it, the one least recently confirmed is
 * forgotten and its entries dropped from memory (they are read from Redis again if asked).
 */
const EPOCHS_REMEMBERED = 10_000;

/**
 * The page cache with `REDIS_URL`: a tier in this process's memory (the memory store, bounded by
 * `CACHE_MAX_MB`) in front of Redis's (`RedisPageStore`), shared by the instances. A read looks
 * in memory first, then in Redis while the link is up, and a page or answer found there is copied
 * to memory with its age, so that it expires when Redis's does; a write goes to both (to Redis
 * while the link is up). The TTL, the stale window, the answers' TTL and the claims on fetches are
 * Redis's store's; while the link is down the memory tier serves alone, and nothing is claimed.
 *
 * Revocation: Redis's epoch of a key (`RedisPageStore`) says that nothing kept for it was revoked
 * since. This process remembers, per key, the epoch its memory entries belong to; while the link
 * is up, an entry served from memory is first checked against Redis's epoch (one `GET`, shared by
 * the reads of one key at once), and any read or write of Redis that finds another epoch, or
 * none, drops everything memory holds for the key. So a 401 any instance saw is honoured by every
 * instance that reaches Redis at its next read of the key; an instance cut off from Redis serves
 * what it holds (at most a TTL old) until it reaches Redis again, or sees the 401 itself. Entries
 * stored while the link was down belong to the epoch remembered for their key (none known, to the
 * one Redis has when it answers again); a key without an epoch in Redis then (revoked, evicted,
 * restarted empty) has them dropped.
 */
export class TieredPageStore implements PageStore {
  readonly #local: MemoryPageStore;
  readonly #shared: RedisPageStore;
  readonly #link: RedisLink;
  readonly #ttlMs: number;
  /** Per owner, the epoch its entries in memory belong to, least recently confirmed first. */
  readonly #epochs = new Map<string, string>();
  /** Epoch checks in flight, per owner. */
  readonly #checks = new Map<string, Promise<boolean>>();
  /** Keys whose fetch this process claimed in Redis (not those granted while it was down). */
  readonly #claimed = new Set<string>();

  constructor(options: TieredPageStoreOptions) {
    this.#local = options.local;
    this.#shared = options.shared;
    this.#link = options.link;
    this.#ttlMs = options.ttlMs;
  }

  async get(key: string): Promise<CachedPage | undefined> {
    const page = await this.#local.get(key);
    if (page && (await this.#current(ownerOf(key)))) return page;
    const kept = await this.#readPage(key);
    return kept && kept.ageMs < this.#ttlMs ? kept.page : undefined;
  }

  async getStale(key: string): Promise<StalePage | undefined> {
    const kept = await this.#local.getStale(key);
    if (kept && (await this.#current(ownerOf(key)))) return kept;
    return this.#readPage(key);
  }

  /** The page under `key` in Redis, copied to memory; undefined while the link is down. */
  async #readPage(key: string): Promise<StalePage | undefined> {
    if (!this.#link.up) return undefined;
    const read = await this.#shared.readPage(key);
    if (!read) return undefined;
    this.#learn(ownerOf(key), read.epoch);
    if (read.entry) this.#local.set(key, read.entry.page, read.entry.ageMs);
    return read.entry;
  }

  async set(key: string, page: CachedPage): Promise<void> {
    if (this.#link.up) {
      const epoch = await this.#shared.writePage(key, page);
      if (epoch !== undefined) this.#learn(ownerOf(key), epoch);
    }
    this.#local.set(key, page);
  }

  async getAnswer(key: string): Promise<StoredAnswer | undefined> {
    const answer = this.#local.getAnswer(key);
    if (answer && (await this.#current(ownerOf(key)))) return answer;
    if (!this.#link.up) return undefined;
    const read = await this.#shared.readAnswer(key);
    if (!read) return undefined;
    this.#learn(ownerOf(key), read.epoch);
    if (!read.entry) return undefined;
    this.#local.setAnswer(key, read.entry.answer, read.entry.ttlMs);
    return read.entry.answer;
  }

  async setAnswer(key: string, answer: StoredAnswer, ttlMs: number): Promise<void> {
    if (ttlMs <= 0) return;
    if (this.#link.up) {
      const epoch = await this.#shared.writeAnswer(key, answer, ttlMs);
      if (epoch !== undefined) this.#learn(ownerOf(key), epoch);
    }
    this.#local.setAnswer(key, answer, ttlMs);
  }

  /**
   * Whether what memory holds for `owner` may be served: at once while the link is down (or
   * Redis does not answer), else once Redis's epoch says nothing was revoked since.
   */
  #current(owner: string): Promise<boolean> | boolean {
    if (!this.#link.up) return true;
    let check = this.#checks.get(owner);
    if (!check) {
      check = this.#shared
        .readEpoch(owner)
        .then((epoch) => epoch === undefined || this.#learn(owner, epoch))
        .finally(() => this.#checks.delete(owner));
      this.#checks.set(owner, check);
    }
    return check;
  }

  /**
   * Takes note that Redis's epoch of `owner` is `epoch` (null: none). Memory's entries of the
   * owner stand if that is the one they belong to (or the first known); else they are dropped,
   * and false is returned.
   */
  #learn(owner: string, epoch: string | null): boolean {
    const known = this.#epochs.get(owner);
    const stands = epoch !== null && (known === undefined || known === epoch);
    if (!stands) this.#local.revoke(owner);
    this.#epochs.delete(owner);
    if (epoch === null) return false;
    this.#epochs.set(owner, epoch);
    if (this.#epochs.size > EPOCHS_REMEMBERED) {
      const [oldest] = this.#epochs.keys();
      this.#epochs.delete(oldest!);
      this.#local.revoke(oldest!);
    }
    return stands;
  }

  async revoke(owner: string): Promise<void> {
    this.#local.revoke(owner);
    this.#epochs.delete(owner);
    await this.#shared.revoke(owner);
  }

  async claim(key: string): Promise<boolean> {
    if (!this.#link.up) return true;
    const claimed = await this.#shared.claim(key);
    if (claimed) this.#claimed.add(key);
    return claimed;
  }

  release(key: string): void {
    if (this.#claimed.delete(key)) this.#shared.release(key);
  }

  async awaitPage(
    key: string,
    deadline: number,
    signal?: AbortSignal,
  ): Promise<CachedPage | undefined> {
    const read = await this.#shared.awaitPage(key, deadline, signal);
    if (!read?.entry) return undefined;
    this.#learn(ownerOf(key), read.epoch);
    this.#local.set(key, read.entry.page, read.entry.ageMs);
    return read.entry.page;
  }

  async ready(timeoutMs: number): Promise<void> {
    await this.#shared.ready(timeoutMs);
  }

  /** Bytes of pages and answers the memory tier holds. */
  bytesHeld(): number {
    return this.#local.bytesHeld();
  }

  async close(): Promise<void> {
    await Promise.all([this.#shared.close(), this.#local.close()]);
  }
}
