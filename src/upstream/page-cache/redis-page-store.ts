import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChainableCommander, Redis } from 'ioredis';
import { RedisDown, type RedisLink } from '../../redis/redis-link.js';
import { sharedPrefix } from '../../redis/shared-redis.js';
import type { ListEnvelope, UpstreamRecord } from '../types.js';
import { ownerOf } from './page-key.js';
import type { CachedPage, PageStore, StalePage, StoredAnswer } from './page-store.js';

/** Options of {@link RedisPageStore}. */
export interface RedisPageStoreOptions {
  /** The process's link to the shared Redis (`REDIS_URL`): nothing is asked while it is down. */
  link: RedisLink;
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
 * Stores an entry (KEYS[1]) under its owner's epoch (KEYS[2]), made with ARGV[1] if the owner
 * has none: the value is `<epoch>\n` and ARGV[2], kept ARGV[3] ms; the epoch is kept ARGV[4] ms
 * (as long as any entry lives) from this store on.
 */
const STORE = `local epoch = redis.call('get', KEYS[2]) or ARGV[1]
redis.call('set', KEYS[2], epoch, 'PX', ARGV[4])
redis.call('set', KEYS[1], epoch .. '\\n' .. ARGV[2], 'PX', ARGV[3])
return 1`;

/** The store script, as `defineCommand` makes it. */
type StoreCommand = (
  entry: string,
  epoch: string,
  newEpoch: string,
  value: string | Buffer,
  keptMs: number,
  epochMs: number,
) => Promise<number>;

/** Revocations kept to send again while Redis does not take them; more are not kept. */
const PENDING_REVOCATIONS = 10_000;
/** How often revocations Redis did not take are sent again. */
const REVOKE_RETRY_MS = 500;

/**
 * The shared page cache: the same keys, TTL and semantics as the memory store, in Redis, so that
 * instances behind one address share pages and the fetch of each page. Values are
 * `<epoch>\nreceivedAt\n<envelope JSON>` under `bsg:v2:<upstream>:page:<name>` (answers,
 * `<epoch>\n<facts JSON>\n<data>` under `answer:<name>`), expiring after the TTL
 * and the stale window; a page's age is read from what is left of that (`PTTL`), on Redis's clock,
 * so that instances whose clocks differ agree on it. Claims are `SET NX PX`
 * under `bsg:v2:<upstream>:claim:<name>`, where `<upstream>` is a hash of the service's URL and
 * `<name>` an HMAC of the page key with the server's secret. Redis bounds its own memory
 * (`maxmemory`, `allkeys-lru`): whole answers share it with the pages.
 *
 * Each entry (a page, an answer) is written with its owner's epoch (`epoch:<HMAC of the key's
 * hash>`, a random token made by the first entry stored for the key, and kept as long as its
 * entries live), and read in the same round trip as the epoch now: an entry of another epoch is
 * not there. `revoke` deletes the epoch, so that no instance serves anything stored before, and
 * the next entry starts a new one; an epoch Redis evicted makes misses, never a stale answer. A
 * revocation Redis does not take (down, cut off) is sent again before this instance reads or
 * writes anything, and every {@link REVOKE_RETRY_MS}, until Redis takes it.
 *
 * Nothing is asked while the link is down (a command timed out, or Redis was unreachable): a page
 * is then a miss, a claim granted, an entry not written; each failure that took it down is
 * reported to `onError`.
 */
export class RedisPageStore implements PageStore {
  readonly #options: RedisPageStoreOptions;
  /** Names this instance's claims. */
  readonly #token = randomUUID();

  readonly #prefix: string;
  readonly #store: StoreCommand;
  /** Owners whose revocation Redis has not taken yet: sent before anything else is read. */
  readonly #unrevoked = new Set<string>();
  #retry: NodeJS.Timeout | undefined;

  constructor(options: RedisPageStoreOptions) {
    this.#options = options;
    this.#prefix = sharedPrefix(options.upstream);
    const { client } = options.link;
    client.defineCommand('bsgPageStore', { numberOfKeys: 2, lua: STORE });
    const redis = client as unknown as Record<'bsgPageStore', StoreCommand>;
    this.#store = (...args) => {
      if (!options.link.up) throw new RedisDown();
      return redis.bsgPageStore.apply(client, args);
    };
  }

  /** The client, while the link is up; else {@link RedisDown} thrown (every caller's fallback). */
  get #redis(): Redis {
    if (!this.#options.link.up) throw new RedisDown();
    return this.#options.link.client;
  }

  /** How long an entry, and so its owner's epoch, may live: the TTL and the stale window. */
  get #keptMs(): number {
    return this.#options.ttlMs + this.#options.staleMs;
  }

  async get(key: string): Promise<CachedPage | undefined> {
    const kept = await this.getStale(key);
    return kept && kept.ageMs < this.#options.ttlMs ? kept.page : undefined;
  }

  async getStale(key: string): Promise<StalePage | undefined> {
    try {
      return this.#kept(await this.#readPage(await this.#pipeline(), key).exec());
    } catch (error) {
      this.#failed(error);
      return undefined;
    }
  }

  /**
   * Queues the reads of a page on `pipeline`: its value, what is left of its life, and its
   * owner's epoch now.
   */
  #readPage(pipeline: ChainableCommander, key: string): ChainableCommander {
    const name = this.#name('page', key);
    return pipeline.get(name).pttl(name).get(this.#epochName(key));
  }

  /** The page and its age from the results of {@link #readPage}, first in `results`. */
  #kept(results: [Error | null, unknown][] | null): StalePage | undefined {
    const [[pageError, value] = [], [ttlError, leftMs] = [], [epochError, epoch] = []] =
      results ?? [];
    if (pageError || ttlError || epochError) throw pageError ?? ttlError ?? epochError;
    const page = decode(ofEpoch(value as string | null, epoch as string | null));
    // -2: gone since the GET; -1: no expiry, which this store never sets.
    if (!page || typeof leftMs !== 'number' || leftMs < 0) return undefined;
    return { page, ageMs: this.#keptMs - leftMs };
  }

  async set(key: string, page: CachedPage): Promise<void> {
    const value = `${page.receivedAt}\n${JSON.stringify(page.envelope)}`;
    await this.#write(this.#name('page', key), key, value, this.#keptMs);
  }

  async getAnswer(key: string): Promise<StoredAnswer | undefined> {
    try {
      const pipeline = await this.#pipeline();
      const results = await pipeline
        .getBuffer(this.#name('answer', key))
        .get(this.#epochName(key))
        .exec();
      const [[answerError, value] = [], [epochError, epoch] = []] = results ?? [];
      if (answerError || epochError) throw answerError ?? epochError;
      return decodeAnswer(ofEpoch(value as Buffer | null, epoch as string | null));
    } catch (error) {
      this.#failed(error);
      return undefined;
    }
  }

  async setAnswer(key: string, answer: StoredAnswer, ttlMs: number): Promise<void> {
    if (ttlMs <= 0) return;
    const { data, ...facts } = answer;
    const value = Buffer.concat([Buffer.from(`${JSON.stringify(facts)}\n`), data]);
    await this.#write(this.#name('answer', key), key, value, Math.ceil(ttlMs));
  }

  /** Writes the entry `name` (of `key`) under its owner's epoch, for `keptMs`. */
  async #write(name: string, key: string, value: string | Buffer, keptMs: number): Promise<void> {
    try {
      // Revocations first: an entry stored now must not join the epoch one ends.
      await this.#sendRevocations();
      const epoch = randomBytes(9).toString('base64url');
      await this.#store(name, this.#epochName(key), epoch, value, keptMs, this.#keptMs);
    } catch (error) {
      this.#failed(error);
    }
  }

  async revoke(owner: string): Promise<void> {
    this.#unrevoked.delete(owner);
    if (this.#unrevoked.size < PENDING_REVOCATIONS) this.#unrevoked.add(owner);
    try {
      await this.#sendRevocations();
    } catch (error) {
      this.#failed(error);
      this.#retry ??= setInterval(() => {
        this.#sendRevocations().catch((retryError: unknown) => this.#failed(retryError));
      }, REVOKE_RETRY_MS).unref();
    }
  }

  /** A pipeline to read entries, once Redis has taken the revocations it had not; else throws. */
  async #pipeline(): Promise<ChainableCommander> {
    await this.#sendRevocations();
    return this.#redis.pipeline();
  }

  /** Deletes the epochs of the owners in {@link #unrevoked}; throws if Redis does not take it. */
  async #sendRevocations(): Promise<void> {
    if (this.#unrevoked.size === 0) return;
    const owners = [...this.#unrevoked];
    await this.#redis.del(...owners.map((owner) => this.#name('epoch', owner)));
    for (const owner of owners) this.#unrevoked.delete(owner);
    if (this.#unrevoked.size === 0 && this.#retry) {
      clearInterval(this.#retry);
      this.#retry = undefined;
    }
  }

  /** The Redis name of the epoch of the owner of `key` (a page's or an answer's name). */
  #epochName(key: string): string {
    return this.#name('epoch', ownerOf(key));
  }

  /**
   * The Redis name of a page, answer, claim or owner's epoch: under the upstream's prefix, the
   * key signed.
   */
  #name(kind: 'page' | 'answer' | 'claim' | 'epoch', key: string): string {
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
        results = await this.#readPage(await this.#pipeline(), key)
          .exists(this.#name('claim', key))
          .exec();
        kept = this.#kept(results);
      } catch (error) {
        this.#failed(error);
        return undefined;
      }
      const [, , , [claimError, claimed] = []] = results ?? [];
      if (claimError) return undefined;
      // A page past its TTL is not the one being fetched: only a fresh one ends the wait.
      if (kept && kept.ageMs < this.#options.ttlMs) return kept.page;
      // The claim is gone and no page came: that fetch failed; this caller fetches itself.
      if (claimed === 0) return undefined;
    }
    return undefined;
  }

  async ready(timeoutMs: number): Promise<void> {
    await this.#options.link.ready(timeoutMs);
  }

  /** Redis bounds its own memory (`maxmemory`): its figures are Redis's to report. */
  bytesHeld(): undefined {
    return undefined;
  }

  /** The link is the process's: whoever made it closes it. */
  async close(): Promise<void> {
    if (this.#retry) clearInterval(this.#retry);
  }

  #failed(error: unknown): void {
    if (error instanceof RedisDown) return;
    this.#options.link.failed(error);
    const reason = error instanceof Error ? error.message : String(error);
    this.#options.onError(`page cache: Redis failed (${reason}); serving from the service`);
  }
}

/**
 * What `value` holds after its epoch (`<epoch>\n...`, as {@link STORE} writes it), if that is
 * `epoch`, the owner's now; else null: the entry was stored before a revocation.
 */
function ofEpoch(value: string | null, epoch: string | null): string | null;
function ofEpoch(value: Buffer | null, epoch: string | null): Buffer | null;
function ofEpoch(value: string | Buffer | null, epoch: string | null): string | Buffer | null {
  if (value === null || epoch === null) return null;
  const head = `${epoch}\n`;
  if (typeof value === 'string') return value.startsWith(head) ? value.slice(head.length) : null;
  const kept = value.length >= head.length && value.toString('latin1', 0, head.length) === head;
  return kept ? value.subarray(head.length) : null;
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

/** `<facts JSON>\n<data JSON>`, as {@link RedisPageStore.setAnswer} writes it after the epoch. */
function decodeAnswer(value: Buffer | null): StoredAnswer | undefined {
  if (!value) return undefined;
  const newline = value.indexOf(10);
  if (newline < 0) return undefined;
  const facts = JSON.parse(value.subarray(0, newline).toString()) as Omit<StoredAnswer, 'data'>;
  return { ...facts, data: value.subarray(newline + 1) };
}
