import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FIRST_PAUSE_MS, MAX_PAUSE_MS, PollRate } from '../../src/live/poll-rate.js';

/** The fake clock's times (ms from the start) at which each of `count` turns of `key` came. */
function record(rate: PollRate, key: string, count: number, signal?: AbortSignal) {
  const start = Date.now();
  const times: number[] = [];
  const done = Array.from({ length: count }, () =>
    rate.turn(key, signal).then(
      () => times.push(Date.now() - start),
      () => undefined,
    ),
  );
  return { times, done: Promise.all(done) };
}

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('PollRate', () => {
  it('gives one turn per 1/perSecond s per key, in order, and another key its own', async () => {
    const rate = new PollRate({ perSecond: 2 });
    const a = record(rate, 'a', 4);
    const b = record(rate, 'b', 2);
    await vi.advanceTimersByTimeAsync(5_000);
    await Promise.all([a.done, b.done]);
    expect(a.times).toEqual([0, 500, 1_000, 1_500]);
    expect(b.times).toEqual([0, 500]);
  });

  it('lets unused turns lapse: no burst after a quiet time', async () => {
    const rate = new PollRate({ perSecond: 1 });
    await rate.turn('a');
    await vi.advanceTimersByTimeAsync(10_000);
    const later = record(rate, 'a', 3);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(later.times).toEqual([0, 1_000, 2_000]);
  });

  it('drops a waiter whose signal aborts, and gives its turn to the next', async () => {
    const rate = new PollRate({ perSecond: 1 });
    await rate.turn('a');
    const stop = new AbortController();
    const aborted = rate.turn('a', stop.signal);
    const next = record(rate, 'a', 1);
    stop.abort(new Error('stopped'));
    await expect(aborted).rejects.toThrowError('stopped');
    await vi.advanceTimersByTimeAsync(1_000);
    expect(next.times).toEqual([1_000]);
    await expect(rate.turn('a', stop.signal)).rejects.toThrowError('stopped');
  });

  it("pauses every turn of the key for a 429's Retry-After, then resumes at its pace", async () => {
    const rate = new PollRate({ perSecond: 1 });
    await rate.turn('a');
    expect(rate.tooManyRequests('a', 4)).toBe(4_000);
    const waiting = record(rate, 'a', 2);
    const other = record(rate, 'b', 1);
    await vi.advanceTimersByTimeAsync(3_999);
    expect(waiting.times).toEqual([]);
    expect(other.times).toEqual([0]);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(waiting.times).toEqual([4_000, 5_000]);
  });

  it('without Retry-After, pauses 1 s, doubling for each 429 in a row, until one is answered', async () => {
    const rate = new PollRate({ perSecond: 1 });
    expect(rate.tooManyRequests('a', undefined)).toBe(FIRST_PAUSE_MS);
    // Another request of the same burst, answered during the pause: no longer.
    await vi.advanceTimersByTimeAsync(500);
    expect(rate.tooManyRequests('a', undefined)).toBe(FIRST_PAUSE_MS - 500);
    await vi.advanceTimersByTimeAsync(500);
    expect(rate.tooManyRequests('a', undefined)).toBe(2 * FIRST_PAUSE_MS);
    await vi.advanceTimersByTimeAsync(2 * FIRST_PAUSE_MS);
    expect(rate.tooManyRequests('a', undefined)).toBe(4 * FIRST_PAUSE_MS);
    await vi.advanceTimersByTimeAsync(4 * FIRST_PAUSE_MS);
    rate.answered('a');
    expect(rate.tooManyRequests('a', undefined)).toBe(FIRST_PAUSE_MS);
    let pause = FIRST_PAUSE_MS;
    for (let i = 0; i < 20; i++) {
      await vi.advanceTimersByTimeAsync(pause);
      pause = rate.tooManyRequests('a', undefined);
    }
    expect(pause).toBe(MAX_PAUSE_MS);
  });

  it('starts from 1 s again after a quiet time as long as the last pause', async () => {
    const rate = new PollRate({ perSecond: 1 });
    rate.tooManyRequests('a', undefined);
    await vi.advanceTimersByTimeAsync(FIRST_PAUSE_MS);
    expect(rate.tooManyRequests('a', undefined)).toBe(2 * FIRST_PAUSE_MS);
    await vi.advanceTimersByTimeAsync(4 * FIRST_PAUSE_MS);
    expect(rate.tooManyRequests('a', undefined)).toBe(FIRST_PAUSE_MS);
  });

  it('forgets an idle key', async () => {
    const rate = new PollRate({ perSecond: 1 });
    await rate.turn('a');
    rate.tooManyRequests('b', undefined);
    expect(rate.keys).toBe(2);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(rate.keys).toBe(1);
    await vi.advanceTimersByTimeAsync(2 * FIRST_PAUSE_MS);
    expect(rate.keys).toBe(0);
  });
});
