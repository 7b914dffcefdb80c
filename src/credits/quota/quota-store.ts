import type { CreditQuota } from './credit-quota.js';

/** What a store answers to a reservation. */
export interface QuotaAnswer {
  /** The cost was taken from the bucket. */
  admitted: boolean;
  /** Credits left in the bucket: after the cost when admitted, as they were when refused. */
  credits: number;
  /** The store that holds the reservation, where it is settled. */
  heldBy: QuotaStore;
}

/** What a store answers to {@link QuotaStore.reserveUpTo}. */
export interface QuotaPartAnswer {
  /** Credits taken: `most`, or what the bucket held (whole credits), maybe 0. */
  taken: number;
  /** Credits left in the bucket after. */
  credits: number;
  /** The store that holds the reservation, where it is settled. */
  heldBy: QuotaStore;
}

/**
 * Where buckets live: `reserve` takes an operation's estimate before it runs, `settle` gives back
 * what it did not charge once it ends. Both are atomic per principal, whatever runs concurrently.
 */
export interface QuotaStore {
  reserve(principal: string, quota: CreditQuota, cost: number): Promise<QuotaAnswer> | QuotaAnswer;
  /** Takes what the bucket holds, up to `most` (whole credits): what it took, maybe 0. */
  reserveUpTo(
    principal: string,
    quota: CreditQuota,
    most: number,
  ): Promise<QuotaPartAnswer> | QuotaPartAnswer;
  /** Gives back `refund` credits (negative: takes more); answers the credits left after. */
  settle(principal: string, quota: CreditQuota, refund: number): Promise<number> | number;
  close(): Promise<void>;
}

/** Events of the quotas, for metrics and logs. */
export interface QuotaObserver {
  /** Redis failed a reservation or settlement: this instance's memory served it instead. */
  fellBack(reason: string): void;
  /** An operation was refused: its estimate did not fit (CREDIT_QUOTA_EXCEEDED). */
  refused(): void;
  /** An operation's estimate was reserved. */
  reserved(credits: number): void;
  /** A settled operation gave back what it did not charge (more than 0). */
  refunded(credits: number): void;
}
