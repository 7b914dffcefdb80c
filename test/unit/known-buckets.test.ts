import { describe, expect, it } from 'vitest';
import { KnownBuckets } from '../../src/credits/quota/known-buckets.js';

/** 3600 credits an hour: one a second, so that elapsed seconds read as credits. */
const HOURLY = { credits: 3600, windowSeconds: 3600 };

describe('KnownBuckets', () => {
  it('reserves from the level Redis last answered, refilled, never from a full bucket it did not see', () => {
    let now = 0;
    const known = new KnownBuckets(() => now);
    expect(known.seed('a', HOURLY)).toBeNull();
    known.heard('a', HOURLY, 100, 'g1');
    expect(known.take('a', HOURLY, 101)).toEqual({ admitted: false, credits: 100 });
    now = 10_000;
    expect(known.take('a', HOURLY, 101)).toEqual({ admitted: true, credits: 9 });
    // Never heard of: a full bucket.
    expect(known.take('b', HOURLY, 3600)).toEqual({ admitted: true, credits: 0 });
  });

  it('keeps what it took on its own to carry to Redis, and seeds a lost bucket from before it', () => {
    let now = 0;
    const known = new KnownBuckets(() => now);
    known.heard('a', HOURLY, 1000, 'g1');
    expect(known.owes('a')).toBe(false);
    known.take('a', HOURLY, 300);
    known.giveBack('a', HOURLY, 100);
    expect(known.owes('a')).toBe(true);
    expect([...known.owing()].map(([principal, bucket]) => [principal, bucket.unsent])).toEqual([
      ['a', 200],
    ]);
    // Its level is 800; Redis, once told of the 200, should hold 800: the seed is the 1000 before.
    expect(known.level('a', HOURLY)).toBe(800);
    expect(known.seed('a', HOURLY)).toEqual({ credits: 1000, generation: 'g1' });
    now = 5_000;
    expect(known.seed('a', HOURLY)).toEqual({ credits: 1005, generation: 'g1' });

    // A refund on its way to Redis in a settlement: counted here, not carried.
    known.giveBack('a', HOURLY, 50, true);
    expect(known.level('a', HOURLY)).toBe(855);
    expect([...known.owing()][0]![1].unsent).toBe(200);

    // Redis answers before the 200 reach it: the level is its answer less what is still owed.
    known.heard('a', HOURLY, 900, 'g2');
    expect(known.level('a', HOURLY)).toBe(700);
    expect(known.seed('a', HOURLY)).toEqual({ credits: 900, generation: 'g2' });
  });
});
