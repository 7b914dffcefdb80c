import { createHmac, randomBytes } from 'node:crypto';
import type { RedisLink } from '../../redis/redis-link.js';
import { sharedPrefix } from '../../redis/shared-redis.js';
import { BUCKET_SCRIPT, LATE, type BucketAnswer, type BucketMode } from './bucket-script.js';
import type { CreditQuota } from './credit-quota.js';
import { KnownBuckets } from './known-buckets.js';
import type {
  QuotaAnswer,
  QuotaObserver,
  QuotaPartAnswer,
  QuotaStore,
  QuotaTicket,
} from './quota-store.js';

type BucketCommand = (
  bucket: string,
  mark: string,
  generation: string,
  limit: number,
  windowMs: number,
  amount: number,
  mode: BucketMode,
  deadline: number,
  seed: string,
  seedGeneration: string,
  markMs: number,
) => Promise<BucketAnswer>;

/** A principal's bucket as the store asks for it: the principal, its quota, its name in Redis. */
interface BucketRef {
  readonly principal: string;
  readonly quota: CreditQuota;
  readonly name: string;
}

/** Options of {@link RedisQuotaStore}. */
export interface RedisQuotaStoreOptions {
  /** The process's link to the shared Redis (`REDIS_URL`): nothing is asked while it is down. */
  link: RedisLink;
  /** Signs the principal in the bucket's name (`CURSOR_SECRET`): Redis never holds a key or `sub`. */
  secret: string;
  /** The service's base URL: buckets live under the same prefix as its pages. */
  upstream: string;
  observer: QuotaObserver;
  /** This instance's view of the buckets; a fresh one by default (tests inject a clock). */
  known?: KnownBuckets;
}

/**
 * How long a hold's mark lives in Redis (from its last reservation), and a carry's: a settlement
 * or carry that reaches Redis later than this finds no mark (the refund is lost; a carry would
 * apply twice).
 */
const MARK_MS = 60 * 60_000;
/** Settlements kept while Redis is away, at most: past it the oldest are dropped. */
const MAX_KEPT_SETTLEMENTS = 10_000;
/** How often, while something waits for Redis, the store looks whether the link is up again. */
const RETRY_MS = 250;
/** How long an offset to Redis's clock is trusted before it is measured afresh. */
const OFFSET_MS = 30_000;

/** A settlement on its way to Redis: sent again, under its hold's mark, until Redis answers. */
interface Settlement {
  readonly bucket: BucketRef;
  readonly mark: string;
  readonly charged: number;
}

/** Redis's answer to a command, or why there is none: not asked, or not known whether it applied. */
type Asked = { outcome: number; credits: number } | 'unsent' | 'unknown';

/** A clock that never steps back, in ms since the epoch (the offset to Redis's is kept on it). */
const monotonic = () => performance.timeOrigin + performance.now();

/**
 * Buckets in Redis under `bsg:v2:<upstream>:quota:<HMAC of the principal>`, shared by every
 * instance that names it: a principal alternating between instances has one bucket.
 *
 * Every hold has a ticket and a mark in Redis (`…:quota:<HMAC>:h:<id>`, what it took there), so
 * that it is settled exactly once: a settlement gives back the mark's credits less what was
 * charged and deletes the mark, and one sent again finds none. A reservation carries a deadline on
 * Redis's clock (this instance's offset to it, measured from Redis's answers, plus the command
 * timeout), past which the script does nothing: once the instance gave up on it, it never lands.
 *
 * While the link is down (or a command fails), this instance reserves from what it knows of the
 * bucket ({@link KnownBuckets}: the level Redis last answered, refilled), never from a full bucket
 * it did not see; what it takes meanwhile is carried to Redis once the link is up (`carry`, once
 * per id), and so are settlements Redis did not take (at most {@link MAX_KEPT_SETTLEMENTS}). A
 * principal's reservations wait for its own carry and settlements first. A bucket Redis lost (a
 * restart, a flush: the generation changed) is rebuilt from the seed of the first instance that
 * asks, its estimate, instead of full.
 */
export class RedisQuotaStore implements QuotaStore {
  readonly #bucket: BucketCommand;
  readonly #options: RedisQuotaStoreOptions;
  readonly #prefix: string;
  readonly #generationName: string;
  readonly #known: KnownBuckets;
  readonly #timeoutMs: number;
  /** This instance's part of every mark's id. */
  readonly #instance = randomBytes(6).toString('base64url');
  #ids = 0;
  /** Settlements Redis has not taken yet, oldest first. */
  #kept: Settlement[] = [];
  /** Per principal, how many of {@link #kept} are theirs. */
  readonly #keptOf = new Map<string, number>();
  #draining: Promise<void> | null = null;
  #retry: NodeJS.Timeout | undefined;
  /** A lower bound of (Redis's clock − {@link monotonic}), and when it was measured. */
  #offset: { ms: number; at: number } | null = null;

  constructor(options: RedisQuotaStoreOptions) {
    this.#options = options;
    const prefix = sharedPrefix(options.upstream);
    this.#prefix = `${prefix}quota:`;
    this.#generationName = `${prefix}generation`;
    this.#known = options.known ?? new KnownBuckets();
    const { client } = options.link;
    this.#timeoutMs = client.options.commandTimeout ?? 500;
    client.defineCommand('bsgQuotaBucket', { numberOfKeys: 3, lua: BUCKET_SCRIPT });
    const redis = client as unknown as Record<'bsgQuotaBucket', BucketCommand>;
    this.#bucket = (...args) => redis.bsgQuotaBucket.apply(client, args);
    // A new connection may be to another server, with another clock.
    client.on('ready', () => (this.#offset = null));
  }

  open(principal: string, quota: CreditQuota): QuotaTicket {
    const bucket = this.#ref(principal, quota);
    return new RedisTicket(this, bucket, `${bucket.name}:h:${this.#id()}`);
  }

  /** What this instance knows of the buckets (its fallback and its seeds). */
  get known(): KnownBuckets {
    return this.#known;
  }

  /**
   * Runs `mode` on `bucket` in Redis, under `mark`: Redis's answer; `unsent` when Redis was not
   * asked (the link is down); `unknown` when it was and did not answer in time, failed, or
   * answered that the command came past its deadline. Either of the last two is a fallback.
   */
  async ask(bucket: BucketRef, mark: string, amount: number, mode: BucketMode): Promise<Asked> {
    const { link, observer } = this.#options;
    let sent = false;
    try {
      if (link.up && this.#owes(bucket.principal)) await this.#drain();
      const deadline = mode === 'reserve' || mode === 'upto' ? await this.#deadline() : 0;
      const answer = await this.#send(bucket, mark, amount, mode, deadline, () => (sent = true));
      if (answer === LATE) {
        observer.fellBack('a reservation reached Redis past its deadline');
        return 'unknown';
      }
      return answer;
    } catch (error) {
      observer.fellBack(error instanceof Error ? error.message : String(error));
      return sent ? 'unknown' : 'unsent';
    }
  }

  /**
   * Settles a hold's part in Redis (under its mark): now if Redis answers, else kept and sent
   * again once the link is up. Answers the credits left, as Redis or this instance knows them.
   */
  async settleShared(settlement: Settlement, refund: number): Promise<number> {
    const { bucket, mark, charged } = settlement;
    const answer = await this.ask(bucket, mark, charged, 'settle');
    if (typeof answer === 'object') return answer.credits;
    this.#keep(settlement);
    return this.#known.giveBack(bucket.principal, bucket.quota, refund, true);
  }

  /** Credits were taken or given back here while Redis was away: to be carried there. */
  owed(): void {
    this.#retryLater();
  }

  /** The link is the process's: whoever made it closes it. What Redis has not taken is tried once. */
  async close(): Promise<void> {
    clearInterval(this.#retry);
    this.#retry = undefined;
    if (this.#options.link.up) await this.#drain();
  }

  /**
   * Sends one command (the seed is what this instance knows of the bucket) through the link,
   * telling `sending` as it goes: Redis's answer, which this instance then knows the bucket by,
   * or {@link LATE}. Throws what the link throws.
   */
  async #send(
    bucket: BucketRef,
    mark: string,
    amount: number,
    mode: BucketMode,
    deadline: number,
    sending?: () => void,
  ): Promise<{ outcome: number; credits: number } | typeof LATE> {
    const { principal, quota, name } = bucket;
    const seed = this.#known.seed(principal, quota);
    const [outcome, left, generation, redisNow] = await this.#options.link.run(() => {
      sending?.();
      return this.#bucket(
        name,
        mark,
        this.#generationName,
        quota.credits,
        quota.windowSeconds * 1000,
        amount,
        mode,
        deadline,
        seed ? String(seed.credits) : '',
        seed?.generation ?? '',
        MARK_MS,
      );
    });
    this.#measured(redisNow);
    if (outcome === LATE) return LATE;
    const credits = Number(left);
    if (mode === 'carry') this.#known.carried(principal);
    this.#known.heard(principal, quota, credits, generation);
    return { outcome, credits };
  }

  #ref(principal: string, quota: CreditQuota): BucketRef {
    const hmac = createHmac('sha256', this.#options.secret).update(principal).digest('base64url');
    return { principal, quota, name: `${this.#prefix}${hmac}` };
  }

  #id(): string {
    return `${this.#instance}${(++this.#ids).toString(36)}`;
  }

  #owes(principal: string): boolean {
    return this.#known.owes(principal) || this.#keptOf.has(principal);
  }

  #keep(settlement: Settlement): void {
    this.#kept.push(settlement);
    const { principal } = settlement.bucket;
    this.#keptOf.set(principal, (this.#keptOf.get(principal) ?? 0) + 1);
    if (this.#kept.length > MAX_KEPT_SETTLEMENTS) {
      this.#sent(this.#kept.shift()!);
      this.#options.observer.dropped?.(1);
    }
    this.#retryLater();
  }

  #sent({ bucket: { principal } }: Settlement): void {
    const left = (this.#keptOf.get(principal) ?? 1) - 1;
    if (left > 0) this.#keptOf.set(principal, left);
    else this.#keptOf.delete(principal);
  }

  /** While something waits for Redis, looks every {@link RETRY_MS} whether the link is up. */
  #retryLater(): void {
    if (this.#retry) return;
    this.#retry = setInterval(() => {
      if (this.#options.link.up) void this.#drain();
    }, RETRY_MS);
    this.#retry.unref();
  }

  /**
   * Sends what Redis has not taken, in order: each principal's carry (once per id), then the
   * kept settlements. Stops at the first failure (the link is then down), to go on once it is up.
   */
  #drain(): Promise<void> {
    this.#draining ??= this.#drainOnce()
      .catch(() => undefined)
      .finally(() => (this.#draining = null));
    return this.#draining;
  }

  async #drainOnce(): Promise<void> {
    for (const [principal, known] of this.#known.owing()) {
      if (!known.carry) {
        known.carry = { id: this.#id(), credits: known.unsent };
        known.unsent = 0;
      }
      const bucket = this.#ref(principal, known.quota);
      const { id, credits } = known.carry;
      await this.#send(bucket, `${bucket.name}:c:${id}`, credits, 'carry', 0);
    }
    while (this.#kept.length > 0) {
      const settlement = this.#kept[0]!;
      // Already given back here when it was kept: Redis's answer stands from now on.
      await this.#send(settlement.bucket, settlement.mark, settlement.charged, 'settle', 0);
      if (this.#kept[0] === settlement) this.#kept.shift();
      this.#sent(settlement);
    }
    if (this.#kept.length === 0 && this.#known.owing().next().done) {
      clearInterval(this.#retry);
      this.#retry = undefined;
    }
  }

  /** A deadline on Redis's clock for a reservation sent now: past it, the instance gave up. */
  async #deadline(): Promise<number> {
    const now = monotonic();
    if (!this.#offset || now - this.#offset.at > OFFSET_MS) {
      const [seconds, micros] = await this.#options.link.run((client) => client.time());
      this.#offset = null;
      this.#measured(Number(seconds) * 1000 + Math.floor(Number(micros) / 1000));
    }
    return Math.floor(monotonic() + this.#offset!.ms + this.#timeoutMs);
  }

  /**
   * Redis's clock read `redisNow` during a round trip that ended now: its offset to ours is at
   * least `redisNow − now`. The largest such bound of the last {@link OFFSET_MS} is kept (a slow
   * answer bounds it loosely), so that a deadline is never later than the moment this instance
   * gives up, and rarely much earlier.
   */
  #measured(redisNow: number): void {
    const now = monotonic();
    const ms = redisNow - now;
    if (!this.#offset || ms >= this.#offset.ms || now - this.#offset.at > OFFSET_MS) {
      this.#offset = { ms, at: now };
    }
  }
}

/**
 * One hold's part of the bucket: in Redis (under its mark) while Redis answers; from the first
 * failure on, in what this instance knows (carried to Redis later). Settled once: the Redis part
 * under its mark (which says what Redis really took, a reservation whose answer was lost
 * included), the rest here.
 */
class RedisTicket implements QuotaTicket {
  readonly #store: RedisQuotaStore;
  readonly #bucket: BucketRef;
  readonly #mark: string;
  /** Credits Redis answered this hold took there. */
  #shared = 0;
  /** Redis holds a mark of this hold, or may (a command whose answer was lost). */
  #marked = false;
  /** From now on, this hold reserves from what the instance knows. */
  #local = false;
  /** Credits this hold took from what the instance knows. */
  #here = 0;
  #settled: Promise<number> | null = null;

  constructor(store: RedisQuotaStore, bucket: BucketRef, mark: string) {
    this.#store = store;
    this.#bucket = bucket;
    this.#mark = mark;
  }

  async reserve(cost: number): Promise<QuotaAnswer> {
    const shared = await this.#ask(cost, 'reserve');
    if (shared) {
      if (shared.outcome === 1) this.#shared += cost;
      return { admitted: shared.outcome === 1, credits: shared.credits };
    }
    const { principal, quota } = this.#bucket;
    const answer = this.#store.known.take(principal, quota, cost);
    if (answer.admitted) {
      this.#here += cost;
      this.#store.owed();
    }
    return answer;
  }

  async reserveUpTo(most: number): Promise<QuotaPartAnswer> {
    const shared = await this.#ask(most, 'upto');
    if (shared) {
      this.#shared += shared.outcome;
      return { taken: shared.outcome, credits: shared.credits };
    }
    const { principal, quota } = this.#bucket;
    const answer = this.#store.known.takeUpTo(principal, quota, most);
    this.#here += answer.taken;
    if (answer.taken > 0) this.#store.owed();
    return answer;
  }

  settle(charged: number): Promise<number> {
    this.#settled ??= this.#settle(charged);
    return this.#settled;
  }

  async #settle(charged: number): Promise<number> {
    const { known } = this.#store;
    const { principal, quota } = this.#bucket;
    // Redis's part is charged first, up to what it took (all of it while Redis served alone).
    const chargedShared = this.#local ? Math.min(charged, this.#shared) : charged;
    const chargedHere = charged - chargedShared;
    let credits: number | null = null;
    if (this.#here !== 0 || chargedHere !== 0) {
      credits = known.giveBack(principal, quota, this.#here - chargedHere);
      this.#store.owed();
    }
    if (!this.#marked) return credits ?? known.level(principal, quota);
    const shared = await this.#store.settleShared(
      { bucket: this.#bucket, mark: this.#mark, charged: chargedShared },
      this.#shared - chargedShared,
    );
    return credits ?? shared;
  }

  /** Asks Redis, unless this hold is served here: null when it is, from now on. */
  async #ask(
    amount: number,
    mode: 'reserve' | 'upto',
  ): Promise<{ outcome: number; credits: number } | null> {
    if (this.#local) return null;
    const answer = await this.#store.ask(this.#bucket, this.#mark, amount, mode);
    if (typeof answer === 'object') {
      // A refused reservation leaves no mark.
      if (mode === 'upto' || answer.outcome === 1) this.#marked = true;
      return answer;
    }
    if (answer === 'unknown') this.#marked = true;
    this.#local = true;
    return null;
  }
}
