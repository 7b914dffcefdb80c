import { describe, expect, it } from 'vitest';
import type { EndpointName } from '../../src/upstream/endpoints.js';
import { wrap } from '../../src/upstream/operation-call.js';
import { dedupe } from '../../src/upstream/policies/dedupe.js';
import { ledger } from '../../src/upstream/policies/ledger.js';
import { onPage } from '../../src/upstream/policies/on-page.js';
import { envelope, failure, mockService, pageRequest, records } from '../helpers/mock-service.js';

describe('onPage (the record store listens)', () => {
  it('tells the listener of every page received, once, and of no failure', async () => {
    const service = mockService();
    service.pool
      .intercept({ path: '/v1/companies?limit=5' })
      .reply(200, envelope(records(2, 'company')));
    service.pool
      .intercept({ path: '/v1/investors?limit=5' })
      .reply(200, envelope(records(1, 'investor')));
    service.pool.intercept({ path: '/v1/funding-events?limit=5' }).reply(403, failure('FORBIDDEN'));
    const seen: [EndpointName, unknown[]][] = [];
    const call = wrap(
      service.transport,
      ledger(),
      onPage((endpoint, data) => seen.push([endpoint, [...data]])),
      dedupe(new Map()),
    );
    await Promise.allSettled(
      (['companies', 'companies', 'investors', 'fundingEvents'] as const).map((endpoint) =>
        call(pageRequest({ endpoint })),
      ),
    );
    expect(seen).toEqual([
      ['companies', records(2, 'company')],
      ['investors', records(1, 'investor')],
    ]);
    expect(service.sent()).toHaveLength(3);
    await service.done();
  });
});
