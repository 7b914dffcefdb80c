import { describe, expect, it } from 'vitest';
import { wrap } from '../../src/upstream/operation-call.js';
import { ledger } from '../../src/upstream/policies/ledger.js';
import { retry, type RetryOptions } from '../../src/upstream/policies/retry.js';
import { RETRY_BUDGET, RetryBudget } from '../../src/upstream/retry-budget.js';
import { envelope, failure, mockService, pageRequest } from '../helpers/mock-service.js';

const caught = (promise: Promise<unknown>) => promise.catch((error: unknown) => error);

/** The retry policy on the real transport; backoffs of 0 ms (a fixed `random`), reasons recorded. */
function retrying(options: Partial<RetryOptions> = {}, transport: { timeoutMs?: number } = {}) {
  const service = mockService(transport);
  const reasons: string[] = [];
  const call = wrap(
    service.transport,
    ledger(),
    retry({
      retries: 2,
      retryAfterMaxMs: 2_000,
      random: () => 0,
      budget: new RetryBudget(RETRY_BUDGET),
      events: { retry: (reason) => reasons.push(reason) },
      ...options,
    }),
  );
  const answer = (status: number, headers: Record<string, string> = {}) =>
    service.pool
      .intercept({ path: () => true })
      .reply(
        status,
        status === 200 ? envelope([]) : failure(status === 429 ? 'TOO_MANY_REQUESTS' : 'X'),
        {
          headers,
        },
      );
  return { service, call, answer, reasons };
}

describe('retry', () => {
  it('retries a transient fault up to `retries` times, then answers it', async () => {
    const { service, call, answer, reasons } = retrying();
    for (const status of [503, 502, 500]) answer(status);
    const request = pageRequest();
    expect(await caught(call(request))).toMatchObject({
      code: 'UPSTREAM_UNAVAILABLE',
      status: 500,
    });
    expect(service.sent()).toHaveLength(3);
    expect(reasons).toEqual(['503', '502']);
    expect(request.ledger).toMatchObject({ requests: 3, retries: 2 });
    await service.done();
  });

  it('succeeds on a retry: 504, a network error, then the page', async () => {
    const { service, call, answer, reasons } = retrying();
    answer(504);
    service.pool.intercept({ path: () => true }).replyWithError(new Error('socket hang up'));
    answer(200);
    await call(pageRequest());
    expect(service.sent()).toHaveLength(3);
    expect(reasons).toEqual(['504', 'network']);
    await service.done();
  });

  it('retries an exchange that took longer than UPSTREAM_TIMEOUT_MS', async () => {
    const { service, call, reasons } = retrying({ retries: 1 }, { timeoutMs: 50 });
    service.pool
      .intercept({ path: () => true })
      .reply(200, envelope([]))
      .delay(500);
    service.pool.intercept({ path: () => true }).reply(200, envelope([]));
    await call(pageRequest());
    expect(service.sent()).toHaveLength(2);
    expect(reasons).toEqual(['timeout']);
    await service.done();
  });

  it.each([400, 401, 402, 403])('never retries %i', async (status) => {
    const { service, call, answer, reasons } = retrying();
    answer(status);
    expect(await caught(call(pageRequest()))).toMatchObject({ status });
    expect(service.sent()).toHaveLength(1);
    expect(reasons).toEqual([]);
    await service.done();
  });

  it('waits out a short Retry-After once; a second 429 is answered', async () => {
    const { service, call, answer, reasons } = retrying();
    answer(429, { 'retry-after': '0' });
    answer(429, { 'retry-after': '0' });
    expect(await caught(call(pageRequest()))).toMatchObject({
      code: 'TOO_MANY_REQUESTS',
      retryAfter: 0,
    });
    expect(service.sent()).toHaveLength(2);
    expect(reasons).toEqual(['429']);
    await service.done();
  });

  it('answers at once a 429 whose Retry-After is above RETRY_AFTER_MAX_MS, or absent', async () => {
    const { service, call, answer, reasons } = retrying({ retryAfterMaxMs: 2_000 });
    answer(429, { 'retry-after': '3' });
    answer(429);
    expect(await caught(call(pageRequest()))).toMatchObject({ retryAfter: 3 });
    expect(await caught(call(pageRequest()))).toMatchObject({ code: 'TOO_MANY_REQUESTS' });
    expect(service.sent()).toHaveLength(2);
    expect(reasons).toEqual([]);
    await service.done();
  });

  it('does not retry once the retry budget is spent', async () => {
    const budget = new RetryBudget({ ratio: 0, minRetries: 1, windowMs: 10_000 });
    const { service, call, answer, reasons } = retrying({ budget });
    for (const status of [503, 503, 503]) answer(status);
    expect(await caught(call(pageRequest()))).toMatchObject({ status: 503 });
    expect(await caught(call(pageRequest()))).toMatchObject({ status: 503 });
    // One retry in the window: the first call's; the second call gets none.
    expect(service.sent()).toHaveLength(3);
    expect(reasons).toEqual(['503']);
    await service.done();
  });

  it('does not retry a call aborted during its backoff', async () => {
    const { service, call, answer } = retrying({ random: () => 0.99, baseDelayMs: 1_000 });
    answer(503);
    const client = new AbortController();
    const pending = caught(call(pageRequest({ signal: client.signal })));
    await new Promise((resolve) => setTimeout(resolve, 50));
    client.abort();
    expect(await pending).toMatchObject({ failure: 'aborted' });
    expect(service.sent()).toHaveLength(1);
    await service.done();
  });
});

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
