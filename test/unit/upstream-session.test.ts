import { describe, expect, it } from 'vitest';
import type { EndpointName } from '../../src/upstream/endpoints.js';
import { buildPageQuery } from '../../src/upstream/build-query.js';
import type { UpstreamCall } from '../../src/upstream/upstream-call.js';
import { UpstreamSession } from '../../src/upstream/upstream-session.js';

/** A call whose requests stay pending until released, recording what was asked and how many at once. */
function pendingCall() {
  const calls: string[] = [];
  const waiting: (() => void)[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const call: UpstreamCall = async ({ endpoint, filterQuery, cursor, limit, ledger }) => {
    calls.push(`${endpoint}?${buildPageQuery(filterQuery, { cursor, limit })}`);
    ledger.sent();
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    await new Promise<void>((resolve) => waiting.push(resolve));
    inFlight--;
    const meta = { endpoint, creditsUsed: 2, creditsRemaining: 100 - calls.length };
    const page = {
      success: true as const,
      data: [],
      pagination: { hasMore: false, nextCursor: null },
      meta,
    };
    ledger.charged(page);
    return { envelope: page, bytes: 0 };
  };
  const releaseAll = async () => {
    while (waiting.length > 0 || inFlight > 0) {
      waiting.splice(0).forEach((release) => release());
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  const releaseOne = () => waiting.shift()?.();
  return { call, calls, releaseAll, releaseOne, maxInFlight: () => maxInFlight };
}

const session = (call: UpstreamCall, concurrency = 8, apiKey: string | null = 'key') =>
  new UpstreamSession({ call, apiKey, concurrency });

const page = (s: UpstreamSession, endpoint: EndpointName, filters: string, limit = 3) =>
  s.page(endpoint, filters, { limit });

describe('UpstreamSession', () => {
  it('makes each distinct request once per operation', async () => {
    const fake = pendingCall();
    const s = session(fake.call);
    const pages = [
      page(s, 'companies', 'country=DE', 5),
      page(s, 'companies', 'country=DE', 5),
      page(s, 'companies', 'country=DE', 6),
      page(s, 'investors', 'country=DE', 5),
    ];
    await fake.releaseAll();
    await Promise.all(pages);
    expect(fake.calls).toEqual([
      'companies?country=DE&limit=5',
      'companies?country=DE&limit=6',
      'investors?country=DE&limit=5',
    ]);
    expect({ ...s.ledger }).toEqual({ used: 6, saved: 0, remaining: 97, requests: 3, retries: 0 });
  });

  it('keeps at most `concurrency` requests in flight', async () => {
    const fake = pendingCall();
    const s = session(fake.call, 3);
    const pages = Array.from({ length: 10 }, (_, i) => page(s, 'fundingEvents', `companyId=${i}`));
    await new Promise((resolve) => setImmediate(resolve));
    expect(fake.calls).toHaveLength(3);
    await fake.releaseAll();
    await Promise.all(pages);
    expect(fake.calls).toHaveLength(10);
    expect(fake.maxInFlight()).toBe(3);
  });

  it('keeps the cap when a caller arrives while another request finishes', async () => {
    // A new caller may arrive at any microtask after a slot is released: at each delay, the
    // released slot must go to the caller already waiting, not to the newcomer as well.
    for (let hops = 0; hops < 12; hops++) {
      const fake = pendingCall();
      const s = session(fake.call, 2);
      const pages = [0, 1, 2].map((i) => page(s, 'companies', `search=${i}`));
      await new Promise((resolve) => setImmediate(resolve));
      expect(fake.calls).toHaveLength(2);
      fake.releaseOne();
      let arrival: Promise<void> = Promise.resolve();
      for (let i = 0; i < hops; i++) arrival = arrival.then(() => undefined);
      const late = arrival.then(() => page(s, 'companies', 'search=late'));
      await new Promise((resolve) => setImmediate(resolve));
      expect(fake.maxInFlight(), `a caller arriving ${hops} microtasks later`).toBe(2);
      await fake.releaseAll();
      await Promise.all([...pages, late]);
      expect(fake.calls).toHaveLength(4);
    }
  });

  it('tells its page listeners of every page received, once', async () => {
    const fake = pendingCall();
    const s = session(fake.call);
    const seen: string[] = [];
    s.onPage((endpoint) => seen.push(endpoint));
    const pages = [page(s, 'companies', ''), page(s, 'companies', ''), page(s, 'investors', '')];
    await fake.releaseAll();
    await Promise.all(pages);
    expect(seen).toEqual(['companies', 'investors']);
  });

  it('without a key, fails with an UNAUTHORIZED UpstreamError and sends nothing', async () => {
    const fake = pendingCall();
    const s = session(fake.call, 8, null);
    await expect(page(s, 'companies', '')).rejects.toMatchObject({
      name: 'UpstreamError',
      code: 'UNAUTHORIZED',
      failure: 'no-key',
    });
    expect(fake.calls).toEqual([]);
    expect(s.ledger.requests).toBe(0);
  });
});
