import { describe, expect, it } from 'vitest';
import { CreditLedger } from '../../src/credits/credit-ledger.js';
import { wrap } from '../../src/upstream/operation-call.js';
import { pageKey } from '../../src/upstream/page-cache/page-key.js';
import { dedupe, type OperationPages } from '../../src/upstream/policies/dedupe.js';
import { ledger } from '../../src/upstream/policies/ledger.js';
import type { UpstreamRequest } from '../../src/upstream/upstream-call.js';
import { envelope, failure, mockService, pageRequest } from '../helpers/mock-service.js';

describe('dedupe (within an operation)', () => {
  it('sends each distinct page once, and names pages as the cache does', async () => {
    const service = mockService();
    service.pool
      .intercept({ path: () => true })
      .reply(200, () => envelope([], { creditsUsed: 2, creditsRemaining: 97 }))
      .times(3);
    const pages: OperationPages = new Map();
    const call = wrap(service.transport, ledger(), dedupe(pages));
    const operationLedger = new CreditLedger();
    const asked = (
      [
        { filterQuery: 'country=DE', limit: 5 },
        { filterQuery: 'country=DE', limit: 5 },
        // What the caller drops of the page is not part of the page.
        { filterQuery: 'country=DE', limit: 5, skip: 2 },
        { filterQuery: 'country=DE', limit: 6 },
        { endpoint: 'investors', filterQuery: 'country=DE', limit: 5 },
      ] as Partial<UpstreamRequest>[]
    ).map((page) => pageRequest({ ...page, ledger: operationLedger }));
    const answers = await Promise.all(asked.map(call));
    expect(service.sent()).toEqual([
      '/v1/companies?country=DE&limit=5',
      '/v1/companies?country=DE&limit=6',
      '/v1/investors?country=DE&limit=5',
    ]);
    expect(answers[1]).toBe(answers[0]);
    expect(answers[2]).toBe(answers[0]);
    expect([...pages.keys()]).toEqual([pageKey(asked[0]!), pageKey(asked[3]!), pageKey(asked[4]!)]);
    expect({ ...operationLedger }).toEqual({
      used: 6,
      saved: 0,
      uncertain: 0,
      stale: [],
      remaining: 97,
      requests: 3,
      retries: 0,
    });
    await service.done();
  });

  it('answers a failed page with the same failure: it is not asked again in the operation', async () => {
    const service = mockService();
    service.pool.intercept({ path: () => true }).reply(402, failure('PAYMENT_REQUIRED'));
    const call = wrap(service.transport, ledger(), dedupe(new Map()));
    const first = call(pageRequest()).catch((error: unknown) => error);
    const again = await call(pageRequest()).catch((error: unknown) => error);
    expect(again).toBe(await first);
    expect(again).toMatchObject({ code: 'PAYMENT_REQUIRED', status: 402 });
    expect(service.sent()).toEqual(['/v1/companies?limit=5']);
    await service.done();
  });

  it('keeps operations apart: each has its own pages', async () => {
    const service = mockService();
    service.pool
      .intercept({ path: () => true })
      .reply(200, envelope([]))
      .times(2);
    const [a, b] = [
      wrap(service.transport, ledger(), dedupe(new Map())),
      wrap(service.transport, ledger(), dedupe(new Map())),
    ];
    await Promise.all([a!(pageRequest()), b!(pageRequest())]);
    expect(service.sent()).toEqual(['/v1/companies?limit=5', '/v1/companies?limit=5']);
    await service.done();
  });
});
