import { describe, expect, it } from 'vitest';
import { CreditLedger } from '../../src/credits/credit-ledger.js';
import { wrap } from '../../src/upstream/operation-call.js';
import { OperationDeadline } from '../../src/upstream/operation-deadline.js';
import { deadline } from '../../src/upstream/policies/deadline.js';
import { ledger } from '../../src/upstream/policies/ledger.js';
import { retry } from '../../src/upstream/policies/retry.js';
import { RETRY_BUDGET, RetryBudget } from '../../src/upstream/retry-budget.js';
import {
  envelope,
  failure,
  heldAnswers,
  mockService,
  pageRequest,
  records,
} from '../helpers/mock-service.js';

describe('ledger', () => {
  it('books every request sent, each retry included, and the credits charged', async () => {
    const service = mockService();
    service.pool.intercept({ path: () => true }).reply(503, failure('SERVICE_UNAVAILABLE'));
    service.pool
      .intercept({ path: () => true })
      .reply(200, envelope(records(3), { creditsRemaining: 97 }));
    const request = pageRequest();
    const call = wrap(
      service.transport,
      ledger(),
      retry({
        retries: 2,
        retryAfterMaxMs: 0,
        random: () => 0,
        budget: new RetryBudget(RETRY_BUDGET),
      }),
    );
    await call(request);
    expect(service.sent()).toHaveLength(2);
    expect({ ...request.ledger }).toEqual({
      requests: 2,
      retries: 1,
      used: 3,
      saved: 0,
      uncertain: 0,
      stale: [],
      remaining: 97,
    });
    await service.done();
  });

  it('books a request whose answer failed or was malformed, and no credits for it', async () => {
    const service = mockService();
    service.pool.intercept({ path: () => true }).reply(402, failure('PAYMENT_REQUIRED'));
    service.pool.intercept({ path: () => true }).reply(200, { data: 'not an envelope' });
    const request = pageRequest();
    const call = wrap(service.transport, ledger());
    await expect(call(request)).rejects.toMatchObject({ code: 'PAYMENT_REQUIRED' });
    await expect(call(request)).rejects.toMatchObject({ failure: 'malformed' });
    expect(service.sent()).toHaveLength(2);
    expect({ ...request.ledger }).toEqual({
      requests: 2,
      retries: 0,
      used: 0,
      saved: 0,
      uncertain: 0,
      stale: [],
      remaining: null,
    });
    await service.done();
  });
});

describe('ledger, for a request given up once sent', () => {
  it('books one its client gave up on as possibly charged, up to its limit', async () => {
    const service = mockService();
    service.pool.intercept({ path: () => true }).reply(200, heldAnswers().reply);
    const client = new AbortController();
    const call = wrap(
      service.transport,
      ledger(),
      deadline(new OperationDeadline(10_000, client.signal)),
    );
    const request = pageRequest({ limit: 5 });
    const pending = call(request).catch((error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 20));
    client.abort();
    expect(await pending).toMatchObject({ failure: 'aborted' });
    // The service may have answered, and charged, after the gateway stopped waiting.
    expect(request.ledger).toMatchObject({ requests: 1, used: 0, uncertain: 5 });
    await service.done();
  });
});

describe('CreditLedger', () => {
  const page = (creditsUsed: number | undefined, creditsRemaining: number, records = 3) => ({
    data: Array.from({ length: records }),
    meta: { creditsUsed, creditsRemaining },
  });

  it('books a child into its parent, and keeps the child apart', () => {
    const parent = new CreditLedger();
    const child = new CreditLedger(parent);
    child.sent();
    child.charged(page(3, 97));
    child.served(page(5, 90, 5), Date.now() - 1_000);
    child.servedStale({ endpoint: 'companies', ageMs: 1_000 });
    expect({ ...child }).toEqual({
      requests: 1,
      retries: 0,
      used: 3,
      saved: 5,
      uncertain: 0,
      stale: [{ endpoint: 'companies', ageMs: 1_000 }],
      remaining: 97,
    });
    expect({ ...parent }).toEqual({
      requests: 1,
      retries: 0,
      used: 3,
      saved: 5,
      uncertain: 0,
      stale: [{ endpoint: 'companies', ageMs: 1_000 }],
      remaining: 97,
    });
  });

  it('counts one credit a record when the service does not say', () => {
    const ledger = new CreditLedger();
    ledger.charged(page(undefined, 10, 4));
    expect(ledger.used).toBe(4);
  });

  it('reports the freshest remaining: a cached page older than a fresh one does not win', () => {
    const ledger = new CreditLedger();
    ledger.served(page(3, 500), Date.now() - 30_000);
    expect(ledger.remaining).toBe(500);
    ledger.charged(page(3, 420));
    expect(ledger.remaining).toBe(420);
    ledger.served(page(3, 450), Date.now() - 10_000);
    expect(ledger.remaining).toBe(420);
  });
});
