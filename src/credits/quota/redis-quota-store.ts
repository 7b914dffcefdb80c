import { createHmac } from 'node:crypto';
import { RedisDown, type RedisLink } from '../../redis/redis-link.js';
import { sharedPrefix } from '../../redis/shared-redis.js';
import type { CreditQuota } from './credit-quota.js';
import { MemoryQuotaStore } from './memory-quota-store.js';
import type { QuotaAnswer, QuotaObserver, QuotaPartAnswer, QuotaStore } from './quota-store.js';

/**
 * One bucket, atomically. KEYS[1]: the bucket, a hash `{ c: credits, at: ms }` (absent: full).
 * ARGV: the quota's credits, its window in ms, an amount, and `reserve`, `upto` or `settle`. Refills
 * the bucket for the time since `at` (Redis's clock, so instances' clocks never matter), then
 * `reserve` takes the amount if the bucket holds it (else writes nothing), `upto` takes what it
 * holds of the amount in whole credits, and `settle` adds it (negative: takes), never above the
 * quota. Expires once the bucket would be full again. Answers `{ 1 or 0 (taken), credits left as a
 * string }`; `upto`, `{ credits taken, credits left as a string }`.
 */
const BUCKET_SCRIPT = `
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local amount = tonumber(ARGV[3])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local state = redis.call('HMGET', KEYS[1], 'c', 'at')
local credits = tonumber(state[1]) or limit
local at = tonumber(state[2]) or now
if now > at then credits = credits + (now - at) * limit / window; at = now end
if credits > limit then credits = limit end
local answer = 1
if ARGV[4] == 'reserve' then
  if amount > credits then return {0, tostring(credits)} end
  credits = credits - amount
elseif ARGV[4] == 'upto' then
  answer = math.max(0, math.min(amount, math.floor(credits)))
  credits = credits - answer
else
  credits = math.min(limit, credits + amount)
end
redis.call('HSET', KEYS[1], 'c', tostring(credits), 'at', at)
redis.call('PEXPIRE', KEYS[1], math.ceil((limit - credits) * window / limit) + 1000)
return {answer, tostring(credits)}
`;

type BucketCommand = (
  key: string,
  limit: number,
  windowMs: number,
  amount: number,
  mode: 'reserve' | 'upto' | 'settle',
) => Promise<[number, string]>;

/** Options of {@link RedisQuotaStore}. */
export interface RedisQuotaStoreOptions {
  /** The process's link to the shared Redis (`REDIS_URL`): nothing is asked while it is down. */
  link: RedisLink;
  /** Signs the principal in the bucket's name (`CURSOR_SECRET`): Redis never holds a key or `sub`. */
  secret: string;
  /** The service's base URL: buckets live under the same prefix as its pages. */
  upstream: string;
  observer: QuotaObserver;
  /** Serves while Redis is unreachable; a fresh one by default. */
  fallback?: MemoryQuotaStore;
}

/**
 * Buckets in Redis under `bsg:v2:<upstream>:quota:<HMAC of the principal>`, shared by every
 * instance that names it: a principal alternating between instances has one bucket. A command
 * that fails (Redis unreachable: no offline queue, a short timeout) is served by this instance's
 * memory instead, never unlimited, and reported to `observer.fellBack`; the next command tries
 * Redis again. A reservation is settled where it was taken.
 */
export class RedisQuotaStore implements QuotaStore {
  readonly #bucket: BucketCommand;
  readonly #options: RedisQuotaStoreOptions;
  readonly #prefix: string;
  readonly #fallback: MemoryQuotaStore;

  constructor(options: RedisQuotaStoreOptions) {
    this.#options = options;
    this.#prefix = `${sharedPrefix(options.upstream)}quota:`;
    this.#fallback = options.fallback ?? new MemoryQuotaStore();
    const { client } = options.link;
    client.defineCommand('bsgQuotaBucket', { numberOfKeys: 1, lua: BUCKET_SCRIPT });
    const redis = client as unknown as Record<'bsgQuotaBucket', BucketCommand>;
    // While the link is down, nothing is asked: this instance's memory serves at once.
    this.#bucket = (...args) => {
      if (!options.link.up) throw new RedisDown();
      return redis.bsgQuotaBucket.apply(client, args);
    };
  }

  async reserve(principal: string, quota: CreditQuota, cost: number): Promise<QuotaAnswer> {
    try {
      const [taken, credits] = await this.#bucket(
        this.#name(principal),
        quota.credits,
        quota.windowSeconds * 1000,
        cost,
        'reserve',
      );
      return { admitted: taken === 1, credits: Number(credits), heldBy: this };
    } catch (error) {
      this.#failed(error);
      return this.#fallback.reserve(principal, quota, cost);
    }
  }

  async reserveUpTo(principal: string, quota: CreditQuota, most: number): Promise<QuotaPartAnswer> {
    try {
      const [taken, credits] = await this.#bucket(
        this.#name(principal),
        quota.credits,
        quota.windowSeconds * 1000,
        most,
        'upto',
      );
      return { taken, credits: Number(credits), heldBy: this };
    } catch (error) {
      this.#failed(error);
      return this.#fallback.reserveUpTo(principal, quota, most);
    }
  }

  /**
   * Settles a reservation taken in Redis. Should Redis fail now, the refund is lost (the bucket
   * refills with time): giving it to the memory bucket would hand out credits it never lent.
   */
  async settle(principal: string, quota: CreditQuota, refund: number): Promise<number> {
    try {
      const [, credits] = await this.#bucket(
        this.#name(principal),
        quota.credits,
        quota.windowSeconds * 1000,
        refund,
        'settle',
      );
      return Number(credits);
    } catch (error) {
      this.#failed(error);
      return this.#fallback.settle(principal, quota, 0);
    }
  }

  /** The link is the process's: whoever made it closes it. */
  async close(): Promise<void> {
    await this.#fallback.close();
  }

  #name(principal: string): string {
    return `${this.#prefix}${createHmac('sha256', this.#options.secret).update(principal).digest('base64url')}`;
  }

  #failed(error: unknown): void {
    if (!(error instanceof RedisDown)) this.#options.link.failed(error);
    this.#options.observer.fellBack(error instanceof Error ? error.message : String(error));
  }
}
