import type { CreditQuota } from './credit-quota.js';

type MaybePromise<T> = T | Promise<T>;

/** What a store answers to a reservation. */
export interface QuotaAnswer {
  /** The cost was taken from the bucket. */
  admitted: boolean;
  /** Credits left in the bucket: after the cost when admitted, as they were when refused. */
  credits: number;
}

/** What a store answers to {@link QuotaTicket.reserveUpTo}. */
export interface QuotaPartAnswer {
  /** Credits taken: `most`, or what the bucket held (whole credits), maybe 0. */
  taken: number;
  /** Credits left in the bucket after. */
  credits: number;
}

/**
 * One hold's part of a principal's bucket: what its reservations took, settled once. Every
 * reservation of an operation (its estimate, then each extension) goes through its ticket, so
 * that the store knows what the hold took, wherever it took it.
 */
export interface QuotaTicket {
  /** Takes `cost` if the bucket holds it; takes nothing otherwise. */
  reserve(cost: number): MaybePromise<QuotaAnswer>;
  /** Takes what the bucket holds, up to `most` (whole credits): what it took, maybe 0. */
  reserveUpTo(most: number): MaybePromise<QuotaPartAnswer>;
  /**
   * Books `charged` of what the ticket took and gives back the rest (more than it took: takes
   * the difference); once, even when it took nothing (a reservation it gave up on is cancelled
   * there). Answers the credits left after; never fails.
   */
  settle(charged: number): MaybePromise<number>;
}

/**
 * Where buckets live. A hold's reservations and its settlement are atomic per principal, whatever
 * runs concurrently.
 */
export interface QuotaStore {
  /** A ticket of `principal`'s bucket, which has taken nothing yet. */
  open(principal: string, quota: CreditQuota): QuotaTicket;
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
  /**
   * Settlements kept for Redis while it was away were dropped (past the bound): their refunds are
   * lost, and those buckets refill with time instead.
   */
  dropped?(settlements: number): void;
}
