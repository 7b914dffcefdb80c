import { describe, expect, it } from 'vitest';
import { RetryBudget } from '../../src/upstream/retry-budget.js';

describe('RetryBudget', () => {
  const options = { ratio: 0.2, minRetries: 3, windowMs: 10_000 };

  it('allows the minimum however few the requests', () => {
    const budget = new RetryBudget(options);
    budget.request(0);
    expect([1, 2, 3, 4].map(() => budget.tryRetry(0))).toEqual([true, true, true, false]);
  });

  it('allows a share of the requests in the window', () => {
    const budget = new RetryBudget(options);
    for (let i = 0; i < 100; i++) budget.request(1_000);
    let allowed = 0;
    while (budget.tryRetry(1_000)) allowed++;
    expect(allowed).toBe(20);
  });

  it('forgets what left the window', () => {
    const budget = new RetryBudget(options);
    for (let i = 0; i < 100; i++) budget.request(0);
    while (budget.tryRetry(0));
    expect(budget.tryRetry(5_000)).toBe(false);
    // 10 s later the requests and retries of t=0 are out of the window: the minimum again.
    expect(budget.tryRetry(10_500)).toBe(true);
  });
});
