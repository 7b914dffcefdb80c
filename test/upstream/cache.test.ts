import { describe, expect, it } from 'vitest';
import { CreditLedger } from '../../src/credits/credit-ledger.js';
import { wrap } from '../../src/upstream/operation-call.js';
import { MemoryPageStore } from '../../src/upstream/page-cache/memory-page-store.js';
import { keyHash, pageKey } from '../../src/upstream/page-cache/page-key.js';
import type { CachedPage, PageStore } from '../../src/upstream/page-cache/page-store.js';
import { cache } from '../../src/upstream/policies/cache.js';
import { ledger } from '../../src/upstream/policies/ledger.js';
import type { UpstreamRequest } from '../../src/upstream/upstream-call.js';
import { envelope, failure, mockService, pageRequest, records } from '../helpers/mock-service.js';

/** The cache over a memory store on the real transport, its events recorded. */
function cached(store: PageStore = new MemoryPageStore({ ttlMs: 60_000, maxBytes: 1_000_000 })) {
  const service = mockService();
  const events: string[] = [];
  const call = wrap(
    service.transport,
    ledger(),
    cache(store, {
      claimMs: 1_000,
      events: {
        served: (endpoint, credits, source) => events.push(`${source} ${endpoint} ${credits}`),
        cacheMiss: (endpoint) => events.push(`miss ${endpoint}`),
      },
    }),
  );
  const answer = (body: object, status = 200) =>
    service.pool.intercept({ path: () => true }).reply(status, body);
  return { service, store, call, events, answer };
}

describe('cache', () => {
  it('serves a page again from the store: nothing sent, its credits booked as saved', async () => {
    const { service, call, events, answer } = cached();
    answer(envelope(records(3), { creditsRemaining: 97 }));
    const first = pageRequest();
    const again = pageRequest();
    const fetched = await call(first);
    expect((await call(again)).envelope).toEqual(fetched.envelope);
    expect(service.sent()).toHaveLength(1);
    expect(first.ledger).toMatchObject({ requests: 1, used: 3, saved: 0 });
    expect(again.ledger).toMatchObject({ requests: 0, used: 0, saved: 3, remaining: 97 });
    expect(events).toEqual(['miss companies', 'cache companies 3']);
    await service.done();
  });

  it('holds what the body weighed, as the transport measured it', async () => {
    const { service, store, call, answer } = cached();
    const body = envelope(records(7));
    answer(body);
    const request = pageRequest();
    const page = await call(request);
    expect(page.bytes).toBe(JSON.stringify(body).length);
    expect(store.bytesHeld()).toBe(page.bytes + pageKey(request).length);
    await service.done();
  });

  it('never stores a failure', async () => {
    const { service, call, answer } = cached();
    answer(failure('SERVICE_UNAVAILABLE'), 503);
    answer(envelope(records(1)));
    await expect(call(pageRequest())).rejects.toMatchObject({ status: 503 });
    await call(pageRequest());
    await call(pageRequest());
    expect(service.sent()).toHaveLength(2);
    await service.done();
  });

  it('with `fresh`, fetches the page (charged) and refreshes the store', async () => {
    const { service, call, events, answer } = cached();
    answer(envelope(records(1, 'old')));
    answer(envelope(records(1, 'new')));
    await call(pageRequest());
    const fresh = pageRequest({ fresh: true });
    expect((await call(fresh)).envelope.data).toEqual(records(1, 'new'));
    expect(fresh.ledger).toMatchObject({ requests: 1, used: 1, saved: 0 });
    expect((await call(pageRequest())).envelope.data).toEqual(records(1, 'new'));
    expect(service.sent()).toHaveLength(2);
    expect(events).toEqual(['miss companies', 'cache companies 1']);
    await service.done();
  });

  it("the service's 401 for a key drops its pages, not another key's; a 402 drops nothing", async () => {
    const { service, call, answer } = cached();
    answer(envelope(records(1)));
    answer(envelope(records(1)));
    answer(envelope(records(1, 'other')));
    answer(failure('PAYMENT_REQUIRED'), 402);
    answer(failure('UNAUTHORIZED'), 401);
    answer(failure('UNAUTHORIZED'), 401);
    await call(pageRequest({ apiKey: 'key-a' }));
    await call(pageRequest({ apiKey: 'key-a', filterQuery: 'search=a' }));
    await call(pageRequest({ apiKey: 'key-b' }));
    // A 402 under no-cache: the page paid for is still served.
    const poor = pageRequest({ apiKey: 'key-a', fresh: true });
    await expect(call(poor)).rejects.toMatchObject({ status: 402 });
    await call(pageRequest({ apiKey: 'key-a' }));
    expect(service.sent()).toHaveLength(4);
    // A 401: neither of key-a's pages is served again; key-b's is.
    await expect(call(pageRequest({ apiKey: 'key-a', fresh: true }))).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
      status: 401,
    });
    await expect(
      call(pageRequest({ apiKey: 'key-a', filterQuery: 'search=a' })),
    ).rejects.toMatchObject({ status: 401 });
    expect((await call(pageRequest({ apiKey: 'key-b' }))).envelope.data).toEqual(
      records(1, 'other'),
    );
    expect(service.sent()).toHaveLength(6);
    await service.done();
  });

  it("never serves one key's page to another", async () => {
    const { service, call, answer } = cached();
    answer(envelope(records(1)));
    answer(envelope(records(1)));
    await call(pageRequest({ apiKey: 'key-a' }));
    await call(pageRequest({ apiKey: 'key-b' }));
    expect(service.sent()).toHaveLength(2);
    await service.done();
  });

  it('waits for a page another instance claimed, instead of fetching it', async () => {
    const other: CachedPage = {
      envelope: envelope(records(2, 'other')),
      bytes: 100,
      receivedAt: Date.now() - 1_000,
    };
    // A shared store where another instance is fetching the page, and stores it.
    const claimed: PageStore = {
      get: async () => undefined,
      getStale: async () => undefined,
      set: () => {},
      claim: async () => false,
      release: () => {},
      awaitPage: async () => other,
      getAnswer: () => undefined,
      setAnswer: () => {},
      revoke: () => {},
      ready: async () => {},
      bytesHeld: () => 0,
      close: async () => {},
    };
    const { service, call, events } = cached(claimed);
    const request = pageRequest();
    expect((await call(request)).envelope).toBe(other.envelope);
    expect(request.ledger).toMatchObject({ requests: 0, saved: 2 });
    expect(events).toEqual(['cache companies 2']);
    expect(service.sent()).toEqual([]);
    await service.done();
  });
});

describe('pageKey (the cache and the dedupe name a page by it)', () => {
  function request(overrides: Partial<UpstreamRequest> = {}): UpstreamRequest {
    return pageRequest({
      filterQuery: 'country=US',
      limit: 20,
      apiKey: 'sk_live_0123456789abcdef',
      ...overrides,
    });
  }

  it('names the key by a hash, never the key itself', () => {
    const key = pageKey(request());
    expect(key).not.toContain('sk_live_0123456789abcdef');
    expect(key.startsWith(keyHash('sk_live_0123456789abcdef'))).toBe(true);
    expect(keyHash('sk_live_0123456789abcdef')).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });

  it('differs by key, endpoint, filters, cursor and limit, and nothing else', () => {
    const base = pageKey(request());
    expect(pageKey(request({ apiKey: 'sk_live_0123456789abcdeg' }))).not.toBe(base);
    expect(pageKey(request({ endpoint: 'investors' }))).not.toBe(base);
    expect(pageKey(request({ filterQuery: 'country=GB' }))).not.toBe(base);
    expect(pageKey(request({ cursor: 'abc' }))).not.toBe(base);
    expect(pageKey(request({ limit: 21 }))).not.toBe(base);
    // What the caller drops of the page, or how it is budgeted, is not part of the page.
    expect(pageKey(request({ skip: 3, ledger: new CreditLedger() }))).toBe(base);
  });
});
