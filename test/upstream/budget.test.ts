import { describe, expect, it } from 'vitest';
import { CreditBudget } from '../../src/credits/credit-budget.js';
import { CreditLedger } from '../../src/credits/credit-ledger.js';
import { wrap } from '../../src/upstream/operation-call.js';
import { MemoryPageStore } from '../../src/upstream/page-cache/memory-page-store.js';
import { budget } from '../../src/upstream/policies/budget.js';
import { cache } from '../../src/upstream/policies/cache.js';
import { ledger } from '../../src/upstream/policies/ledger.js';
import { envelope, mockService, pageRequest, records, SERVICE } from '../helpers/mock-service.js';

/** The budget on the real transport; the service answers `limit` records, one credit each. */
function budgeted(credits: number, options: { cached?: boolean } = {}) {
  const service = mockService();
  service.pool
    .intercept({ path: () => true })
    .reply(200, ({ path }) =>
      envelope(records(Number(new URL(path, SERVICE).searchParams.get('limit')))),
    )
    .persist();
  const operationBudget = new CreditBudget();
  // Budget and estimate alike: the stop is at `credits` whichever of the two sets it.
  operationBudget.set(credits, credits);
  const operationLedger = new CreditLedger();
  const store = new MemoryPageStore({ ttlMs: 60_000, maxBytes: 1_000_000 });
  const call = wrap(
    service.transport,
    ledger(),
    ...(options.cached ? [cache(store, { claimMs: 1_000 })] : []),
    budget(),
  );
  const ask = (limit: number, skip = 0, filterQuery = '') =>
    call(
      pageRequest({ limit, skip, filterQuery, budget: operationBudget, ledger: operationLedger }),
    );
  return { service, budget: operationBudget, ledger: operationLedger, ask };
}

describe('budget (the hard stop)', () => {
  it("cuts a page's limit to the credits left, and refuses the next: nothing sent", async () => {
    const { service, budget, ledger, ask } = budgeted(30);
    expect((await ask(100)).envelope.data).toHaveLength(30);
    await expect(ask(100, 0, 'search=more')).rejects.toMatchObject({
      code: 'CREDIT_BUDGET_EXHAUSTED',
      failure: 'budget',
    });
    expect(service.sent()).toEqual(['/v1/companies?limit=30']);
    expect(ledger.used).toBe(30);
    expect(budget.available).toBe(0);
    await service.done();
  });

  it('does not send a page whose credits left would not reach past what the caller drops', async () => {
    const { service, ask } = budgeted(10);
    await expect(ask(50, 10)).rejects.toMatchObject({ code: 'CREDIT_BUDGET_EXHAUSTED' });
    expect((await ask(50, 9)).envelope.data).toHaveLength(10);
    expect(service.sent()).toEqual(['/v1/companies?limit=10']);
    await service.done();
  });

  it('shares the credits between concurrent pages: together they never pass them', async () => {
    const { service, ledger, ask } = budgeted(50);
    const pages = await Promise.all([ask(40, 0, 'search=a'), ask(40, 0, 'search=b')]);
    expect(pages.map((page) => page.envelope.data.length)).toEqual([40, 10]);
    expect(service.sent()).toEqual([
      '/v1/companies?search=a&limit=40',
      '/v1/companies?search=b&limit=10',
    ]);
    expect(ledger.used).toBe(50);
    await service.done();
  });

  it('settles each page to what it was charged: a page served from the cache costs nothing', async () => {
    const { service, budget, ledger, ask } = budgeted(50, { cached: true });
    await ask(20);
    expect(budget.available).toBe(30);
    await ask(20);
    expect(budget.available).toBe(30);
    expect(service.sent()).toHaveLength(1);
    expect(ledger).toMatchObject({ used: 20, saved: 20 });
    await service.done();
  });

  it('without a budget, limits nothing', async () => {
    const service = mockService();
    service.pool.intercept({ path: () => true }).reply(200, envelope(records(100)));
    const call = wrap(service.transport, ledger(), budget());
    expect((await call(pageRequest({ limit: 100 }))).envelope.data).toHaveLength(100);
    expect(service.sent()).toEqual(['/v1/companies?limit=100']);
    await service.done();
  });
});
