import type { CreditQuota } from './credit-quota.js';
import type { QuotaAnswer, QuotaPartAnswer, QuotaStore, QuotaTicket } from './quota-store.js';
import { giveBack, refill, take, takeUpTo, type Bucket } from './token-bucket.js';

/** A bucket with the quota it was last used under (to sweep it). */
interface HeldBucket extends Bucket {
  quota: CreditQuota;
}

/** Past this many buckets, those full again are dropped (a full bucket is the same as none). */
const SWEEP_ABOVE = 10_000;

/**
 * Buckets in this process's memory: a Map of principal to a small {@link Bucket} mutated in
 * place, each answered at once. Used without Redis. `now` is injected for tests.
 */
export class MemoryQuotaStore implements QuotaStore {
  readonly #buckets = new Map<string, HeldBucket>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  open(principal: string, quota: CreditQuota): QuotaTicket {
    let taken = 0;
    let settled: number | null = null;
    return {
      reserve: (cost) => {
        const answer = this.reserve(principal, quota, cost);
        if (answer.admitted) taken += cost;
        return answer;
      },
      reserveUpTo: (most) => {
        const answer = this.reserveUpTo(principal, quota, most);
        taken += answer.taken;
        return answer;
      },
      settle: (charged) => (settled ??= this.settle(principal, quota, taken - charged)),
    };
  }

  reserve(principal: string, quota: CreditQuota, cost: number): QuotaAnswer {
    const bucket = this.#bucket(principal, quota);
    const admitted = take(bucket, quota, cost, this.#now());
    return { admitted, credits: bucket.credits };
  }

  reserveUpTo(principal: string, quota: CreditQuota, most: number): QuotaPartAnswer {
    const bucket = this.#bucket(principal, quota);
    const taken = takeUpTo(bucket, quota, most, this.#now());
    return { taken, credits: bucket.credits };
  }

  /** Gives back `refund` credits (negative: takes more); answers the credits left after. */
  settle(principal: string, quota: CreditQuota, refund: number): number {
    const bucket = this.#bucket(principal, quota);
    giveBack(bucket, quota, refund, this.#now());
    return bucket.credits;
  }

  /** Buckets held (for tests). */
  get size(): number {
    return this.#buckets.size;
  }

  async close(): Promise<void> {
    this.#buckets.clear();
  }

  #bucket(principal: string, quota: CreditQuota): HeldBucket {
    let bucket = this.#buckets.get(principal);
    if (bucket) {
      bucket.quota = quota;
      return bucket;
    }
    if (this.#buckets.size >= SWEEP_ABOVE) this.#sweep();
    bucket = { credits: quota.credits, at: this.#now(), quota };
    this.#buckets.set(principal, bucket);
    return bucket;
  }

  #sweep(): void {
    const now = this.#now();
    for (const [principal, bucket] of this.#buckets) {
      refill(bucket, bucket.quota, now);
      if (bucket.credits >= bucket.quota.credits) this.#buckets.delete(principal);
    }
  }
}
