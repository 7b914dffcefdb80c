import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChainableCommander, Redis } from 'ioredis';
import { RedisDown, type RedisLink } from '../../redis/redis-link.js';
import { sharedPrefix } from '../../redis/shared-redis.js';
import type { ListEnvelope, UpstreamRecord } from '../types.js';
import { ownerOf } from './page-key.js';
import type { CachedPage, StalePage, StoredAnswer } from './page-store.js';

/** Options of {@link RedisPageStore}. */
export interface RedisPageStoreOptions {
  /** The process's link to the shared Redis (`REDIS_URL`): nothing is asked while it is down. */
  link: RedisLink;
  ttlMs: number;
  /** How long a page is kept past its TTL, for `getStale` (`CACHE_STALE_SECONDS`); 0, not at all. */
  staleMs: number;
  /** How long a claim on a page's fetch is held at most: the whole call, retries included. */
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

/** Extends a claim (KEYS[1]) by ARGV[2] ms only if it is still this instance's (ARGV[1]). */
const RENEW_CLAIM = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0`;

/**
 * How long a claim lives unless renewed: its holder renews it every {@link CLAIM_RENEW_MS} while
 * the fetch runs (up to `claimMs`), so that a holder that dies, hangs or is cut off from Redis
 * holds the others up for at most this long.
 */
const CLAIM_LEASE_MS = 3_000;
const CLAIM_RENEW_MS = 1_000;

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
return epoch`;

/** The store script, as `defineCommand` makes it. */
type StoreCommand = (
  entry: string,
  epoch: string,
  newEpoch: string,
  value: string | Buffer,
  keptMs: number,
  epochMs: number,
) => Promise<string>;

/** Revocations, and claims to give up, kept to send again while Redis does not take them. */
const PENDING_MAX = 10_000;
/** How often what Redis did not take (revocations, claims to give up) is sent again. */
const PENDING_RETRY_MS = 500;

/**
 * What Redis holds for one entry (a page, an answer), read in one round trip with its owner's
 * epoch now.
 */
export interface SharedRead<T> {
  /** The entry, if it is there under its owner's epoch now. */
  readonly entry: T | undefined;
  /**
   * The owner's epoch now; null when it has none: nothing is kept for the key, or the key was
   * revoked, or Redis lost it (evicted, restarted empty).
   */
  readonly epoch: string | null;
}

/** A kept answer read from Redis, and what is left of its life there. */
export interface SharedAnswer {
  readonly answer: StoredAnswer;
  readonly ttlMs: number;
}

/**
 * The shared tier of the page cache (`TieredPageStore` keeps a tier in memory in front of it):
 * the same keys, TTL and semantics as the memory store, in Redis, so that instances behind one
 * address share pages and the fetch of each page. Values are `<epoch>\nreceivedAt\n<envelope
 * JSON>` under `bsg:v2:<upstream>:page:<name>` (answers, `<epoch>\n<facts JSON>\n<data>` under
 * `answer:<name>`), expiring after the TTL and the stale window; a page's age is read from what
 * is left of that (`PTTL`), on Redis's clock, so that instances whose clocks differ agree on it.
 * Claims are `SET NX PX` of a lease of {@link CLAIM_LEASE_MS}, renewed while the fetch runs, under
 * `bsg:v2:<upstream>:claim:<name>`, where `<upstream>` is a hash of the service's URL and
 * `<name>` an HMAC of the page key with the server's secret. Redis bounds its own memory
 * (`maxmemory`, `allkeys-lru`): whole answers share it with the pages.
 *
 * Each entry (a page, an answer) is written with its owner's epoch (`epoch:<HMAC of the key's
 * hash>`, a random token made by the first entry stored for the key, and kept as long as its
 * entries live), and read in the same round trip as the epoch now: an entry of another epoch is
 * not there. Every read and write tells the epoch it found, so that the tier in memory drops
 * what it holds of an older one. `revoke` deletes the epoch, so that no instance serves anything
 * stored before, and the next entry starts a new one; an epoch Redis evicted makes misses, never
 * a stale answer.
 *
 * What Redis does not take is sent again before this instance reads or writes anything, and
 * every {@link PENDING_RETRY_MS}, until Redis takes it: a revocation, and the release of a claim
 * (one not sent while the link was down, or one whose `SET` timed out and may land later), so
 * that no other instance waits out a claim this one gave up on.
 *
 * Nothing is asked while the link is down (a command timed out, or Redis was unreachable): a read
 * is then undefined, a claim granted, an entry not written; each failure that took it down is
 * reported to `onError`.
 */
export class RedisPageStore {
  readonly #options: RedisPageStoreOptions;
  /** Names this instance's claims. */
  readonly #token = randomUUID();

  readonly #prefix: string;
  readonly #store: StoreCommand;
  /** Owners whose revocation Redis has not taken yet: sent before anything else is read. */
  readonly #unrevoked = new Set<string>();
  /** Page keys whose claim this instance gave up and Redis has not released yet. */
  readonly #unreleased = new Set<string>();
  #retry: NodeJS.Timeout | undefined;
  /** The claims this instance holds, and until when it may renew each (`Date.now()` units). */
  readonly #held = new Map<string, number>();
  #renewal: NodeJS.Timeout | undefined;

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

  /** The page under `key`, at any age within the stale window; undefined if Redis did not answer. */
  async readPage(key: string): Promise<SharedRead<StalePage> | undefined> {
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

  /** The page, its age and its owner's epoch from the results of {@link #readPage}. */
  #kept(results: [Error | null, unknown][] | null): SharedRead<StalePage> {
    const [[pageError, value] = [], [ttlError, leftMs] = [], [epochError, epoch = null] = []] =
      results ?? [];
    if (pageError || ttlError || epochError) throw pageError ?? ttlError ?? epochError;
    const now = epoch as string | null;
    const page = decode(ofEpoch(value as string | null, now));
    // -2: gone since the GET; -1: no expiry, which this store never sets.
    if (!page || typeof leftMs !== 'number' || leftMs < 0) return { entry: undefined, epoch: now };
    return { entry: { page, ageMs: this.#keptMs - leftMs }, epoch: now };
  }

  /** Stores `page` under `key`: the owner's epoch it is stored under, or undefined if not stored. */
  async writePage(key: string, page: CachedPage): Promise<string | undefined> {
    const value = `${page.receivedAt}\n${JSON.stringify(page.envelope)}`;
    return this.#write(this.#name('page', key), key, value, this.#keptMs);
  }

  /** The answer under `key` and what is left of its life; undefined if Redis did not answer. */
  async readAnswer(key: string): Promise<SharedRead<SharedAnswer> | undefined> {
    try {
      const name = this.#name('answer', key);
      const pipeline = await this.#pipeline();
      const results = await pipeline.getBuffer(name).pttl(name).get(this.#epochName(key)).exec();
      const [[answerError, value] = [], [ttlError, leftMs] = [], [epochError, epoch = null] = []] =
        results ?? [];
      if (answerError || ttlError || epochError) throw answerError ?? ttlError ?? epochError;
      const now = epoch as string | null;
      const answer = decodeAnswer(ofEpoch(value as Buffer | null, now));
      if (!answer || typeof leftMs !== 'number' || leftMs <= 0) {
        return { entry: undefined, epoch: now };
      }
      return { entry: { answer, ttlMs: leftMs }, epoch: now };
    } catch (error) {
      this.#failed(error);
      return undefined;
    }
  }

  /** Keeps `answer` under `key` for `ttlMs`: as {@link writePage}. */
  async writeAnswer(key: string, answer: StoredAnswer, ttlMs: number): Promise<string | undefined> {
    if (ttlMs <= 0) return undefined;
    const { data, ...facts } = answer;
    const value = Buffer.concat([Buffer.from(`${JSON.stringify(facts)}\n`), data]);
    return this.#write(this.#name('answer', key), key, value, Math.ceil(ttlMs));
  }

  /** The epoch of `owner` now (null: none); undefined if Redis did not answer. */
  async readEpoch(owner: string): Promise<string | null | undefined> {
    try {
      await this.#sendPending();
      return await this.#redis.get(this.#name('epoch', owner));
    } catch (error) {
      this.#failed(error);
      return undefined;
    }
  }

  /**
   * Writes the entry `name` (of `key`) under its owner's epoch, for `keptMs`: that epoch, or
   * undefined if Redis did not take it.
   */
  async #write(
    name: string,
    key: string,
    value: string | Buffer,
    keptMs: number,
  ): Promise<string | undefined> {
    try {
      // Revocations first: an entry stored now must not join the epoch one ends.
      await this.#sendPending();
      const epoch = randomBytes(9).toString('base64url');
      return await this.#store(name, this.#epochName(key), epoch, value, keptMs, this.#keptMs);
    } catch (error) {
      this.#failed(error);
      return undefined;
    }
  }

  /** Deletes the epoch of `owner`, now or as soon as Redis takes it. */
  async revoke(owner: string): Promise<void> {
    this.#unrevoked.delete(owner);
    if (this.#unrevoked.size < PENDING_MAX) this.#unrevoked.add(owner);
    await this.#flush();
  }

  /** A pipeline to read entries, once Redis has taken what was pending; else throws. */
  async #pipeline(): Promise<ChainableCommander> {
    await this.#sendPending();
    return this.#redis.pipeline();
  }

  /** Sends what is pending; if Redis does not take it, sends it again until it does. */
  async #flush(): Promise<void> {
    try {
      await this.#sendPending();
    } catch (error) {
      this.#failed(error);
      this.#retry ??= setInterval(() => {
        this.#sendPending().catch((retryError: unknown) => this.#failed(retryError));
      }, PENDING_RETRY_MS).unref();
    }
  }

  /**
   * Deletes the epochs of the owners in {@link #unrevoked} and this instance's claims in
   * {@link #unreleased}; throws if Redis does not take it.
   */
  async #sendPending(): Promise<void> {
    if (this.#unrevoked.size === 0 && this.#unreleased.size === 0) return;
    const owners = [...this.#unrevoked];
    const claims = [...this.#unreleased];
    const pipeline = this.#redis.pipeline();
    if (owners.length > 0) pipeline.del(...owners.map((owner) => this.#name('epoch', owner)));
    for (const key of claims) {
      pipeline.eval(RELEASE_CLAIM, 1, this.#name('claim', key), this.#token);
    }
    const failure = (await pipeline.exec())?.find(([error]) => error)?.[0];
    if (failure) throw failure;
    for (const owner of owners) this.#unrevoked.delete(owner);
    for (const key of claims) this.#unreleased.delete(key);
    if (this.#unrevoked.size === 0 && this.#unreleased.size === 0 && this.#retry) {
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

  /**
   * Claims the fetch of `key` for {@link CLAIM_LEASE_MS}, renewed until it is released (for
   * `claimMs` at most): true when no other instance is fetching it now, or when Redis did not
   * answer (a claim sent that may land later is given up once it does).
   */
  async claim(key: string): Promise<boolean> {
    try {
      await this.#sendPending();
      const claimKey = this.#name('claim', key);
      const ok = await this.#redis.set(claimKey, this.#token, 'PX', CLAIM_LEASE_MS, 'NX');
      if (ok !== 'OK') return false;
      this.#held.set(key, Date.now() + this.#options.claimMs);
      this.#renewal ??= setInterval(() => void this.#renew(), CLAIM_RENEW_MS).unref();
      return true;
    } catch (error) {
      if (!(error instanceof RedisDown)) this.#giveUp(key);
      this.#failed(error);
      return true;
    }
  }

  /** Extends the lease of every claim held (and not past `claimMs`); a failure is reported. */
  async #renew(): Promise<void> {
    const now = Date.now();
    for (const [key, until] of this.#held) if (until <= now) this.#held.delete(key);
    if (this.#held.size === 0) {
      clearInterval(this.#renewal);
      this.#renewal = undefined;
      return;
    }
    try {
      const pipeline = this.#redis.pipeline();
      for (const key of this.#held.keys()) {
        pipeline.eval(RENEW_CLAIM, 1, this.#name('claim', key), this.#token, CLAIM_LEASE_MS);
      }
      const failure = (await pipeline.exec())?.find(([error]) => error)?.[0];
      if (failure) throw failure;
    } catch (error) {
      this.#failed(error);
    }
  }

  /** Gives up the claim on `key`: now, or as soon as Redis answers again. */
  release(key: string): void {
    this.#held.delete(key);
    this.#giveUp(key);
    void this.#flush();
  }

  #giveUp(key: string): void {
    if (this.#unreleased.size < PENDING_MAX) this.#unreleased.add(key);
  }

  /**
   * Waits until `key` is stored fresh by the instance that claimed it, at most until `deadline`
   * (`Date.now()` units) or until `signal` aborts; undefined when it was not stored (that fetch
   * failed, or took too long) or Redis did not answer.
   */
  async awaitPage(
    key: string,
    deadline: number,
    signal?: AbortSignal,
  ): Promise<SharedRead<StalePage> | undefined> {
    for (let attempt = 0; Date.now() < deadline && !signal?.aborted; attempt++) {
      await sleep(POLL_MS[Math.min(attempt, POLL_MS.length - 1)]);
      let results;
      let read;
      try {
        results = await this.#readPage(await this.#pipeline(), key)
          .exists(this.#name('claim', key))
          .exec();
        read = this.#kept(results);
      } catch (error) {
        this.#failed(error);
        return undefined;
      }
      const [, , , [claimError, claimed] = []] = results ?? [];
      if (claimError) return undefined;
      // A page past its TTL is not the one being fetched: only a fresh one ends the wait.
      if (read.entry && read.entry.ageMs < this.#options.ttlMs) return read;
      // The claim is gone and no page came: that fetch failed; this caller fetches itself.
      if (claimed === 0) return undefined;
    }
    return undefined;
  }

  async ready(timeoutMs: number): Promise<void> {
    await this.#options.link.ready(timeoutMs);
  }

  /** The link is the process's: whoever made it closes it. */
  async close(): Promise<void> {
    clearInterval(this.#retry);
    clearInterval(this.#renewal);
  }

  #failed(error: unknown): void {
    if (error instanceof RedisDown) return;
    this.#options.link.failed(error);
    const reason = error instanceof Error ? error.message : String(error);
    this.#options.onError(
      `page cache: Redis failed (${reason}); serving from this instance's memory and the service`,
    );
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

/** `<facts JSON>\n<data JSON>`, as {@link RedisPageStore.writeAnswer} writes it after the epoch. */
function decodeAnswer(value: Buffer | null): StoredAnswer | undefined {
  if (!value) return undefined;
  const newline = value.indexOf(10);
  if (newline < 0) return undefined;
  const facts = JSON.parse(value.subarray(0, newline).toString()) as Omit<StoredAnswer, 'data'>;
  return { ...facts, data: value.subarray(newline + 1) };
}
