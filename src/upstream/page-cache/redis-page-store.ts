import { createHmac, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChainableCommander, Redis } from 'ioredis';
import { failFastRedis, sharedPrefix } from '../../redis/shared-redis.js';
import type { ListEnvelope, UpstreamRecord } from '../types.js';
import type { CachedPage, PageStore, StalePage, StoredAnswer } from './page-store.js';

/** Options of {@link RedisPageStore}. */
export interface RedisPageStoreOptions {
  /** `redis://[user:password@]host:port[/db]` (or `rediss://`). */
  url: string;
  ttlMs: number;
  /** How long a page is kept past its TTL, for `getStale` (`CACHE_STALE_SECONDS`); 0, not at all. */
  staleMs: number;
  /** How long a claim on a page's fetch lasts at most (an instance that dies frees it then). */
  claimMs: number;
  /** Told when Redis fails; the store goes on as if the page were not cached. */
  onError: (message: string) => void;
  /**
   * The key Redis names are signed with (`CURSOR_SECRET`): a page key holds a hash of the
   * caller's API key, which a reader of Redis could otherwise test guesses against.
   */
  secret: string;
  /** The service's base URL: pages of two upstreams (staging, production) never mix. */
  upstream: string;
}

/** Deletes a claim only if it is still this instance's (it may have expired and been retaken). */
const RELEASE_CLAIM = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0`;

/** Pauses between looks at a page another instance is fetching: soon at first, then less often. */
const POLL_MS = [2, 5, 10, 20, 40, 50];

/**
 * The shared page cache: the same keys, TTL and semantics as the memory store, in Redis, so that
 * instances behind one address share pages and the fetch of each page. Values are
 * `receivedAt\n<envelope JSON>` under `bsg:v2:<upstream>:page:<name>`, expiring after the TTL
 * and the stale window; a page's age is read from what is left of that (`PTTL`), on Redis's clock,
 * so that instances whose clocks differ agree on it. Claims are `SET NX PX`
 * under `bsg:v2:<upstream>:claim:<name>`, where `<upstream>` is a hash of the service's URL and
 * `<name>` an HMAC of the page key with the server's secret. Redis bounds its own memory
 * (`maxmemory`, `allkeys-lru`).
 *
 * Commands fail at once while Redis is unreachable (no offline queue, a short command timeout):
 * a page is then a miss, a claim granted, and each failure is reported to `onError`.
 */
export class RedisPageStore implements PageStore {
  readonly #redis: Redis;
  readonly #options: RedisPageStoreOptions;
  /** Names this instance's claims. */
  readonly #token = randomUUID();

  readonly #prefix: string;

  constructor(options: RedisPageStoreOptions) {
    this.#options = options;
    this.#prefix = sharedPrefix(options.upstream);
    this.#redis = failFastRedis(options.url);
    this.#redis.on('error', (error: Error) => this.#failed(error));
  }

  async get(key: string): Promise<CachedPage | undefined> {
    const kept = await this.getStale(key);
    return kept && kept.ageMs < this.#options.ttlMs ? kept.page : undefined;
  }

  async getStale(key: string): Promise<StalePage | undefined> {
    try {
      return this.#kept(await this.#readPage(this.#redis.pipeline(), key).exec());
    } catch (error) {
      this.#failed(error);
      return undefined;
    }
  }

  /** Queues the reads of a page on `pipeline`: its value and what is left of its life. */
  #readPage(pipeline: ChainableCommander, key: string): ChainableCommander {
    const name = this.#name('page', key);
    return pipeline.get(name).pttl(name);
  }

  /** The page and its age from the results of {@link #readPage}, first in `results`. */
  #kept(results: [Error | null, unknown][] | null): StalePage | undefined {
    const [[pageError, value] = [], [ttlError, leftMs] = []] = results ?? [];
    if (pageError || ttlError) throw pageError ?? ttlError;
    const page = decode(value as string | null);
    // -2: gone since the GET; -1: no expiry, which this store never sets.
    if (!page || typeof leftMs !== 'number' || leftMs < 0) return undefined;
    return { page, ageMs: this.#options.ttlMs + this.#options.staleMs - leftMs };
  }

  async set(key: string, page: CachedPage): Promise<void> {
    const value = `${page.receivedAt}\n${JSON.stringify(page.envelope)}`;
    const keptMs = this.#options.ttlMs + this.#options.staleMs;
    try {
      await this.#redis.set(this.#name('page', key), value, 'PX', keptMs);
    } catch (error) {
      this.#failed(error);
    }
  }

  async getAnswer(key: string): Promise<StoredAnswer | undefined> {
    try {
      return decodeAnswer(await this.#redis.getBuffer(this.#name('answer', key)));
    } catch (error) {
      this.#failed(error);
      return undefined;
    }
  }

  async setAnswer(key: string, answer: StoredAnswer, ttlMs: number): Promise<void> {
    if (ttlMs <= 0) return;
    const { data, ...facts } = answer;
    const value = Buffer.concat([Buffer.from(`${JSON.stringify(facts)}\n`), data]);
    try {
      await this.#redis.set(this.#name('answer', key), value, 'PX', Math.ceil(ttlMs));
    } catch (error) {
      this.#failed(error);
    }
  }

  /** The Redis name of a page, answer or claim: under the upstream's prefix, the key signed. */
  #name(kind: 'page' | 'answer' | 'claim', key: string): string {
    return `${this.#prefix}${kind}:${createHmac('sha256', this.#options.secret).update(key).digest('base64url')}`;
  }

  async claim(key: string): Promise<boolean> {
    try {
      const claimKey = this.#name('claim', key);
      const ok = await this.#redis.set(claimKey, this.#token, 'PX', this.#options.claimMs, 'NX');
      return ok === 'OK';
    } catch (error) {
      this.#failed(error);
      return true;
    }
  }

  release(key: string): void {
    this.#redis
      .eval(RELEASE_CLAIM, 1, this.#name('claim', key), this.#token)
      .catch((error: unknown) => this.#failed(error));
  }

  async awaitPage(
    key: string,
    deadline: number,
    signal?: AbortSignal,
  ): Promise<CachedPage | undefined> {
    for (let attempt = 0; Date.now() < deadline && !signal?.aborted; attempt++) {
      await sleep(POLL_MS[Math.min(attempt, POLL_MS.length - 1)]);
      let results;
      let kept;
      try {
        results = await this.#readPage(this.#redis.pipeline(), key)
          .exists(this.#name('claim', key))
          .exec();
        kept = this.#kept(results);
      } catch (error) {
        this.#failed(error);
        return undefined;
      }
      const [, , [claimError, claimed] = []] = results ?? [];
      if (claimError) return undefined;
      // A page past its TTL is not the one being fetched: only a fresh one ends the wait.
      if (kept && kept.ageMs < this.#options.ttlMs) return kept.page;
      // The claim is gone and no page came: that fetch failed; this caller fetches itself.
      if (claimed === 0) return undefined;
    }
    return undefined;
  }

  async ready(timeoutMs: number): Promise<void> {
    if (this.#redis.status === 'ready') return;
    const controller = new AbortController();
    await Promise.race([
      once(this.#redis, 'ready', { signal: controller.signal }).catch(() => {}),
      sleep(timeoutMs, undefined, { signal: controller.signal }).catch(() => {}),
    ]);
    controller.abort();
  }

  /** Redis bounds its own memory (`maxmemory`): its figures are Redis's to report. */
  bytesHeld(): undefined {
    return undefined;
  }

  async close(): Promise<void> {
    try {
      await this.#redis.quit();
    } catch {
      this.#redis.disconnect();
    }
  }

  #failed(error: unknown): void {
    const reason = error instanceof Error ? error.message : String(error);
    this.#options.onError(`page cache: Redis failed (${reason}); serving from the service`);
  }
}

function decode(value: string | null): CachedPage | undefined {
  if (!value) return undefined;
  const newline = value.indexOf('\n');
  const receivedAt = Number(value.slice(0, newline));
  const text = value.slice(newline + 1);
  return {
    envelope: JSON.parse(text) as ListEnvelope<UpstreamRecord>,
    receivedAt,
    bytes: text.length,
  };
}

/** `<facts JSON>\n<data JSON>`, as {@link RedisPageStore.setAnswer} writes it. */
function decodeAnswer(value: Buffer | null): StoredAnswer | undefined {
  if (!value) return undefined;
  const newline = value.indexOf(10);
  if (newline < 0) return undefined;
  const facts = JSON.parse(value.subarray(0, newline).toString()) as Omit<StoredAnswer, 'data'>;
  return { ...facts, data: value.subarray(newline + 1) };
}
