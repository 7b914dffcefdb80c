import { describe, expect, it } from 'vitest';
import { MemoryQuotaStore } from '../../src/credits/quota/memory-quota-store.js';
import { parseCreditQuota } from '../../src/credits/quota/credit-quota.js';
import { giveBack, secondsUntil, take, type Bucket } from '../../src/credits/quota/token-bucket.js';

/** 3600 credits an hour: one a second, so that elapsed seconds read as credits. */
const HOURLY = { credits: 3600, windowSeconds: 3600 };

describe('the token bucket', () => {
  it('refills continuously at its rate, never above its size', () => {
    const bucket: Bucket = { credits: 100, at: 0 };
    expect(take(bucket, HOURLY, 0, 10_000)).toBe(true);
    expect(bucket.credits).toBe(110);
    expect(take(bucket, HOURLY, 0, 10_500)).toBe(true);
    expect(bucket.credits).toBe(110.5);
    expect(take(bucket, HOURLY, 0, 100_000_000)).toBe(true);
    expect(bucket.credits).toBe(3600);
  });

  it('takes a cost that fits, and takes nothing of one that does not', () => {
    const bucket: Bucket = { credits: 50, at: 0 };
    expect(take(bucket, HOURLY, 50, 0)).toBe(true);
    expect(bucket.credits).toBe(0);
    expect(take(bucket, HOURLY, 5, 4_000)).toBe(false);
    expect(bucket.credits).toBe(4);
    expect(take(bucket, HOURLY, 5, 5_000)).toBe(true);
    expect(bucket.credits).toBe(0);
  });

  it('settles: gives back what was not charged (up to its size), takes an overcharge', () => {
    const bucket: Bucket = { credits: 3500, at: 0 };
    take(bucket, HOURLY, 50, 0);
    giveBack(bucket, HOURLY, 45, 0);
    expect(bucket.credits).toBe(3495);
    giveBack(bucket, HOURLY, 1000, 0);
    expect(bucket.credits).toBe(3600);
    giveBack(bucket, HOURLY, -3700, 0);
    expect(bucket.credits).toBe(-100);
    expect(take(bucket, HOURLY, 1, 100_000)).toBe(false);
    expect(take(bucket, HOURLY, 1, 101_000)).toBe(true);
  });

  it('says when a cost fits, and never for one above the whole quota', () => {
    expect(secondsUntil(HOURLY, 10, 40)).toBe(30);
    expect(secondsUntil(HOURLY, 10, 10.2)).toBe(1);
    expect(secondsUntil(HOURLY, 10, 5)).toBe(0);
    expect(secondsUntil({ credits: 5000, windowSeconds: 3600 }, 0, 50)).toBe(36);
    expect(secondsUntil(HOURLY, 3600, 3601)).toBeNull();
  });
});

describe('MemoryQuotaStore', () => {
  it('keeps one bucket per principal, on the injected clock', () => {
    let now = 0;
    const store = new MemoryQuotaStore(() => now);
    expect(store.reserve('a', HOURLY, 3600)).toMatchObject({ admitted: true, credits: 0 });
    expect(store.reserve('a', HOURLY, 1)).toMatchObject({ admitted: false, credits: 0 });
    expect(store.reserve('b', HOURLY, 1)).toMatchObject({ admitted: true, credits: 3599 });
    now = 20_000;
    expect(store.reserve('a', HOURLY, 20)).toMatchObject({ admitted: true, credits: 0 });
    expect(store.settle('a', HOURLY, 15)).toBe(15);
    expect(store.size).toBe(2);
  });
});

describe('parseCreditQuota', () => {
  it('reads <credits>/<minute|hour|day> and nothing else', () => {
    expect(parseCreditQuota('20000/hour')).toEqual({ credits: 20_000, windowSeconds: 3600 });
    expect(parseCreditQuota('5/day')).toEqual({ credits: 5, windowSeconds: 86_400 });
    for (const bad of [20_000, '20000', '20000/week', '0/hour', 'lots/hour', null]) {
      expect(parseCreditQuota(bad)).toBeNull();
    }
  });
});
