import { describe, expect, it } from 'vitest';
import { CircuitBreaker } from '../../src/upstream/circuit-breaker.js';
import { wrap } from '../../src/upstream/operation-call.js';
import { breaker } from '../../src/upstream/policies/breaker.js';
import { ledger } from '../../src/upstream/policies/ledger.js';
import { observe } from '../../src/upstream/policies/observe.js';
import { retry } from '../../src/upstream/policies/retry.js';
import { RETRY_BUDGET, RetryBudget } from '../../src/upstream/retry-budget.js';
import type { Exchange } from '../../src/upstream/upstream-observer.js';
import { envelope, failure, mockService, pageRequest, records } from '../helpers/mock-service.js';

describe('observe', () => {
  it('tells of each exchange, each retry its own: status, failure, credits, duration', async () => {
    const service = mockService();
    service.pool.intercept({ path: () => true }).reply(503, failure('SERVICE_UNAVAILABLE'));
    service.pool.intercept({ path: () => true }).replyWithError(new Error('socket hang up'));
    service.pool.intercept({ path: () => true }).reply(200, envelope(records(4)));
    const exchanges: Exchange[] = [];
    const call = wrap(
      service.transport,
      ledger(),
      observe({ exchange: (exchange) => exchanges.push(exchange) }),
      retry({
        retries: 2,
        retryAfterMaxMs: 0,
        random: () => 0,
        budget: new RetryBudget(RETRY_BUDGET),
      }),
    );
    await call(pageRequest());
    expect(exchanges).toEqual([
      {
        endpoint: 'companies',
        status: 503,
        failure: 'status',
        credits: 0,
        requestId: 'req-1',
        seconds: expect.any(Number),
      },
      {
        endpoint: 'companies',
        status: 0,
        failure: 'network',
        credits: 0,
        requestId: undefined,
        seconds: expect.any(Number),
      },
      { endpoint: 'companies', status: 200, credits: 4, seconds: expect.any(Number) },
    ]);
    expect(service.sent()).toHaveLength(3);
    await service.done();
  });

  it('tells nothing of a call the breaker refused (it sits inside the breaker)', async () => {
    const service = mockService();
    service.pool.intercept({ path: () => true }).reply(503, failure('SERVICE_UNAVAILABLE'));
    const exchanges: Exchange[] = [];
    const call = wrap(
      service.transport,
      ledger(),
      observe({ exchange: (exchange) => exchanges.push(exchange) }),
      breaker(new CircuitBreaker({ failureThreshold: 1, openMs: 60_000 })),
    );
    await expect(call(pageRequest())).rejects.toMatchObject({ status: 503 });
    await expect(call(pageRequest())).rejects.toMatchObject({ failure: 'open-circuit' });
    expect(exchanges).toEqual([expect.objectContaining({ status: 503 })]);
    expect(service.sent()).toHaveLength(1);
    await service.done();
  });
});
