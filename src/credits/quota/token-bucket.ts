import type { CreditQuota } from './credit-quota.js';

/**
 * One principal's bucket: the credits it holds at time `at` (ms). Mutated in place. `credits` may
 * fall below 0 when an operation charged more than it reserved: the principal then waits longer.
 */
export interface Bucket {
  credits: number;
  at: number;
}

/** A full bucket of `quota` at `now`. */
export function fullBucket(quota: CreditQuota, now: number): Bucket {
  return { credits: quota.credits, at: now };
}

/** Adds the credits restored since `bucket.at` (never above the quota), and moves it to `now`. */
export function refill(bucket: Bucket, quota: CreditQuota, now: number): void {
  if (now > bucket.at) {
    const restored = ((now - bucket.at) * quota.credits) / (quota.windowSeconds * 1000);
    bucket.credits = Math.min(quota.credits, bucket.credits + restored);
    bucket.at = now;
  } else if (bucket.credits > quota.credits) {
    // The principal's quota was lowered since.
    bucket.credits = quota.credits;
  }
}

/**
 * Refills `bucket`, then takes `cost` credits if it holds them: true if it did. A refused cost
 * takes nothing.
 */
export function take(bucket: Bucket, quota: CreditQuota, cost: number, now: number): boolean {
  refill(bucket, quota, now);
  if (cost > bucket.credits) return false;
  bucket.credits -= cost;
  return true;
}

/**
 * Refills `bucket`, then takes what it holds of `most`, in whole credits: what it took (0 when it
 * holds less than one).
 */
export function takeUpTo(bucket: Bucket, quota: CreditQuota, most: number, now: number): number {
  refill(bucket, quota, now);
  const taken = Math.max(0, Math.min(most, Math.floor(bucket.credits)));
  bucket.credits -= taken;
  return taken;
}

/**
 * Refills `bucket`, then gives back `refund` credits (what a reservation did not charge; negative
 * when the operation charged more than it reserved), never above the quota.
 */
export function giveBack(bucket: Bucket, quota: CreditQuota, refund: number, now: number): void {
  refill(bucket, quota, now);
  bucket.credits = Math.min(quota.credits, bucket.credits + refund);
}

/**
 * Seconds until a bucket holding `credits` holds `cost` (at least 1), or null when `cost` is above
 * the whole quota and never fits.
 */
export function secondsUntil(quota: CreditQuota, credits: number, cost: number): number | null {
  if (cost > quota.credits) return null;
  const missing = cost - credits;
  if (missing <= 0) return 0;
  return Math.max(1, Math.ceil((missing * quota.windowSeconds) / quota.credits));
}
