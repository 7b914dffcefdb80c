import type { CreditQuota } from './credit-quota.js';
import { giveBack, refill, take, takeUpTo, type Bucket } from './token-bucket.js';

/** Credits taken here to be taken from the shared bucket, sent again under its id until it is. */
export interface Carry {
  readonly id: string;
  readonly credits: number;
}

/**
 * What this instance knows of one principal's shared bucket: its level as Redis last answered
 * it, moved by what this instance did since (refilled with time, as the bucket is).
 */
export interface KnownBucket extends Bucket {
  quota: CreditQuota;
  /** The Redis generation the level was last heard in; null: never heard from Redis. */
  generation: string | null;
  /**
   * Credits this instance took on its own (Redis away) that the shared bucket has not been told
   * of; negative when it gave back more.
   */
  unsent: number;
  /** The part of `unsent` on its way to Redis, if any. */
  carry: Carry | null;
}

/** Past this many principals, those whose bucket is full again and owes nothing are dropped. */
const SWEEP_ABOVE = 10_000;

/**
 * This instance's view of the shared buckets of the principals it served: the level it last
 * heard from Redis, and what it did on its own since. While Redis is away it is where the
 * instance reserves (from the last level known, never a full bucket it did not see), and what it
 * took is carried to Redis once it is back; after Redis lost its buckets, it is the seed they are
 * rebuilt from. `now` is injected for tests.
 */
export class KnownBuckets {
  readonly #buckets = new Map<string, KnownBucket>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Redis answered that `principal`'s bucket holds `credits`, in `generation`. */
  heard(principal: string, quota: CreditQuota, credits: number, generation: string): void {
    const bucket = this.#bucket(principal, quota);
    bucket.credits = credits - bucket.unsent - (bucket.carry?.credits ?? 0);
    bucket.at = this.#now();
    bucket.generation = generation;
  }

  /** Redis took `principal`'s carry (its answer, heard next, holds it). */
  carried(principal: string): void {
    const bucket = this.#buckets.get(principal);
    if (bucket) bucket.carry = null;
  }

  /**
   * What the shared bucket should hold, as far as this instance knows, before what it still has
   * to carry (which the carry then takes), and the generation that was heard in; null for a
   * principal it knows nothing of.
   */
  seed(principal: string, quota: CreditQuota): { credits: number; generation: string } | null {
    const bucket = this.#buckets.get(principal);
    if (!bucket) return null;
    refill(bucket, quota, this.#now());
    return {
      credits: bucket.credits + bucket.unsent + (bucket.carry?.credits ?? 0),
      generation: bucket.generation ?? '',
    };
  }

  /** Takes `cost` here (Redis away) if the known level holds it: to be carried to Redis. */
  take(
    principal: string,
    quota: CreditQuota,
    cost: number,
  ): { admitted: boolean; credits: number } {
    const bucket = this.#bucket(principal, quota);
    const admitted = take(bucket, quota, cost, this.#now());
    if (admitted) bucket.unsent += cost;
    return { admitted, credits: bucket.credits };
  }

  /** Takes up to `most` here (Redis away), in whole credits: to be carried to Redis. */
  takeUpTo(
    principal: string,
    quota: CreditQuota,
    most: number,
  ): { taken: number; credits: number } {
    const bucket = this.#bucket(principal, quota);
    const taken = takeUpTo(bucket, quota, most, this.#now());
    bucket.unsent += taken;
    return { taken, credits: bucket.credits };
  }

  /**
   * Gives back `refund` of what was taken here (negative: takes more), carried to Redis as well;
   * or, `shared`, a refund the shared bucket will get from a settlement on its way there.
   */
  giveBack(principal: string, quota: CreditQuota, refund: number, shared = false): number {
    const bucket = this.#bucket(principal, quota);
    giveBack(bucket, quota, refund, this.#now());
    if (!shared) bucket.unsent -= refund;
    return bucket.credits;
  }

  /** The credits `principal`'s bucket holds as far as this instance knows. */
  level(principal: string, quota: CreditQuota): number {
    const bucket = this.#bucket(principal, quota);
    refill(bucket, quota, this.#now());
    return bucket.credits;
  }

  /** Whether this instance has credits of `principal` to carry to Redis. */
  owes(principal: string): boolean {
    const bucket = this.#buckets.get(principal);
    return bucket !== undefined && (bucket.unsent !== 0 || bucket.carry !== null);
  }

  /** The principals with credits to carry to Redis, with their buckets. */
  *owing(): Generator<[string, KnownBucket]> {
    for (const entry of this.#buckets) {
      if (entry[1].unsent !== 0 || entry[1].carry !== null) yield entry;
    }
  }

  /** Principals known (for tests). */
  get size(): number {
    return this.#buckets.size;
  }

  #bucket(principal: string, quota: CreditQuota): KnownBucket {
    let bucket = this.#buckets.get(principal);
    if (bucket) {
      bucket.quota = quota;
      return bucket;
    }
    if (this.#buckets.size >= SWEEP_ABOVE) this.#sweep();
    bucket = {
      credits: quota.credits,
      at: this.#now(),
      quota,
      generation: null,
      unsent: 0,
      carry: null,
    };
    this.#buckets.set(principal, bucket);
    return bucket;
  }

  #sweep(): void {
    const now = this.#now();
    for (const [principal, bucket] of this.#buckets) {
      refill(bucket, bucket.quota, now);
      const full = bucket.credits >= bucket.quota.credits;
      if (full && bucket.unsent === 0 && bucket.carry === null) this.#buckets.delete(principal);
    }
  }
}
