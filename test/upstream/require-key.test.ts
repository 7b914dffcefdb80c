import { describe, expect, it } from 'vitest';
import { wrap } from '../../src/upstream/operation-call.js';
import { ledger } from '../../src/upstream/policies/ledger.js';
import { requireKey } from '../../src/upstream/policies/require-key.js';
import { envelope, mockService, pageRequest } from '../helpers/mock-service.js';

describe('requireKey', () => {
  it('without a key, fails UNAUTHORIZED and sends nothing', async () => {
    const service = mockService();
    const request = pageRequest({ apiKey: '' });
    const call = wrap(service.transport, ledger(), requireKey());
    await expect(call(request)).rejects.toMatchObject({
      name: 'UpstreamError',
      code: 'UNAUTHORIZED',
      failure: 'no-key',
      message: expect.stringContaining('X-API-Key'),
    });
    expect(service.sent()).toEqual([]);
    expect(request.ledger.requests).toBe(0);
    await service.done();
  });

  it('with a key, sends it as X-API-Key', async () => {
    const service = mockService();
    service.pool
      .intercept({ path: '/v1/companies?limit=5', headers: { 'x-api-key': 'sk_test_1' } })
      .reply(200, envelope([]));
    const call = wrap(service.transport, ledger(), requireKey());
    await call(pageRequest({ apiKey: 'sk_test_1' }));
    expect(service.sent()).toHaveLength(1);
    await service.done();
  });
});
