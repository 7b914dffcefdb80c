import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { CircuitBreaker } from '../../src/upstream/circuit-breaker.js';
import { wrap } from '../../src/upstream/operation-call.js';
import { MemoryPageStore } from '../../src/upstream/page-cache/memory-page-store.js';
import { breaker } from '../../src/upstream/policies/breaker.js';
import { cache } from '../../src/upstream/policies/cache.js';
import { ledger } from '../../src/upstream/policies/ledger.js';
import { stale } from '../../src/upstream/policies/stale.js';
import { envelope, failure, mockService, pageRequest, records } from '../helpers/mock-service.js';

const caught = (promise: Promise<unknown>) => promise.catch((error: unknown) => error);

/** A TTL the tests wait out, and the stale window past it. */
const TTL_MS = 50;
const STALE_MS = 400;

/**
 * The stale fallback around the cache, a breaker (opened by one failure) and the ledger, on the
 * real transport over a memory store; its events recorded.
 */
function staleOnFailure() {
  const service = mockService();
  const store = new MemoryPageStore({ ttlMs: TTL_MS, staleMs: STALE_MS, maxBytes: 1_000_000 });
  const circuit = new CircuitBreaker({ failureThreshold: 1, openMs: 60_000 });
  const events: string[] = [];
  const call = wrap(
    service.transport,
    ledger(),
    breaker(circuit),
    cache(store, { claimMs: 1_000 }),
    stale(store, {
      served: (endpoint, credits, source) => events.push(`${source} ${endpoint} ${credits}`),
    }),
  );
  const answer = (status: number, body: object) =>
    service.pool.intercept({ path: () => true }).reply(status, body);
  /** Fetches and caches a page of 3 records, then waits past its TTL. */
  async function expired() {
    answer(200, envelope(records(3), { creditsRemaining: 97 }));
    const page = await call(pageRequest());
    await sleep(TTL_MS + 30);
    return page;
  }
  return { service, circuit, call, events, answer, expired };
}

describe('stale', () => {
  it('answers a 5xx with the expired page: no credit, saved, booked as stale with its age', async () => {
    const { service, call, events, answer, expired } = staleOnFailure();
    const fetched = await expired();
    answer(503, failure('SERVICE_UNAVAILABLE'));
    const request = pageRequest();
    expect((await call(request)).envelope).toEqual(fetched.envelope);
    expect(service.sent()).toHaveLength(2);
    expect(request.ledger).toMatchObject({ requests: 1, used: 0, saved: 3, remaining: 97 });
    expect(request.ledger.stale).toEqual([{ endpoint: 'companies', ageMs: expect.any(Number) }]);
    expect(request.ledger.stale[0]!.ageMs).toBeGreaterThanOrEqual(TTL_MS);
    expect(events).toEqual(['stale companies 3']);
    await service.done();
  });

  it('answers an open breaker with it too, sending nothing', async () => {
    const { service, circuit, call, answer, expired } = staleOnFailure();
    await expired();
    answer(500, failure('INTERNAL'));
    await call(pageRequest());
    expect(circuit.state).toBe('open');
    const request = pageRequest();
    await call(request);
    expect(request.ledger).toMatchObject({ requests: 0, saved: 3 });
    expect(request.ledger.stale).toHaveLength(1);
    expect(service.sent()).toHaveLength(2);
    await service.done();
  });

  it.each([
    [400, 'INVALID_INPUT'],
    [401, 'UNAUTHORIZED'],
    [402, 'PAYMENT_REQUIRED'],
    [403, 'FORBIDDEN'],
    [429, 'TOO_MANY_REQUESTS'],
  ])('never hides a %i: the caller sees %s', async (status, code) => {
    const { service, call, events, answer, expired } = staleOnFailure();
    await expired();
    answer(status, failure(code));
    const request = pageRequest();
    expect(await caught(call(request))).toMatchObject({ code, status });
    expect(request.ledger.stale).toEqual([]);
    expect(events).toEqual([]);
    await service.done();
  });

  it('with `fresh` (Cache-Control: no-cache), answers the failure', async () => {
    const { service, call, answer, expired } = staleOnFailure();
    await expired();
    answer(503, failure('SERVICE_UNAVAILABLE'));
    expect(await caught(call(pageRequest({ fresh: true })))).toMatchObject({
      code: 'UPSTREAM_UNAVAILABLE',
      status: 503,
    });
    await service.done();
  });

  it('answers the failure once the page expired longer ago than the stale window', async () => {
    const { service, call, answer, expired } = staleOnFailure();
    await expired();
    await sleep(STALE_MS);
    answer(503, failure('SERVICE_UNAVAILABLE'));
    expect(await caught(call(pageRequest()))).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
    await service.done();
  });

  it("never serves another key's page", async () => {
    const { service, call, answer, expired } = staleOnFailure();
    await expired();
    answer(503, failure('SERVICE_UNAVAILABLE'));
    expect(await caught(call(pageRequest({ apiKey: 'other-key' })))).toMatchObject({
      code: 'UPSTREAM_UNAVAILABLE',
    });
    await service.done();
  });
});
