import { describe, expect, it } from 'vitest';
import type { UpstreamClient } from '../../src/upstream/create-upstream-client.js';
import { UpstreamSession } from '../../src/upstream/upstream-session.js';

/** A client whose calls stay pending until released, recording what was asked and when. */
function pendingClient() {
  const calls: string[] = [];
  const waiting: (() => void)[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const client: UpstreamClient = {
    async list(endpoint, query) {
      calls.push(`${endpoint}?${query}`);
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise<void>((resolve) => waiting.push(resolve));
      inFlight--;
      return {
        success: true,
        data: [],
        pagination: { hasMore: false, nextCursor: null },
        meta: { endpoint, creditsUsed: 2, creditsRemaining: 100 - calls.length },
      };
    },
    async close() {},
  };
  const releaseAll = async () => {
    while (waiting.length > 0 || inFlight > 0) {
      waiting.splice(0).forEach((release) => release());
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  return { client, calls, releaseAll, maxInFlight: () => maxInFlight };
}

describe('UpstreamSession', () => {
  it('makes each distinct request once per operation', async () => {
    const fake = pendingClient();
    const session = new UpstreamSession(fake.client, 'key', 8);
    const pages = [
      session.page('companies', 'country=DE', { limit: 5 }),
      session.page('companies', 'country=DE', { limit: 5 }),
      session.page('companies', 'country=DE', { limit: 6 }),
      session.page('investors', 'country=DE', { limit: 5 }),
    ];
    await fake.releaseAll();
    await Promise.all(pages);
    expect(fake.calls).toEqual([
      'companies?country=DE&limit=5',
      'companies?country=DE&limit=6',
      'investors?country=DE&limit=5',
    ]);
    expect(session.ledger).toEqual({ used: 6, remaining: 97, requests: 3 });
  });

  it('keeps at most `concurrency` requests in flight', async () => {
    const fake = pendingClient();
    const session = new UpstreamSession(fake.client, 'key', 3);
    const pages = Array.from({ length: 10 }, (_, i) =>
      session.page('fundingEvents', `companyId=${i}`, { limit: 3 }),
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(fake.calls).toHaveLength(3);
    await fake.releaseAll();
    await Promise.all(pages);
    expect(fake.calls).toHaveLength(10);
    expect(fake.maxInFlight()).toBe(3);
  });

  it('without a key, fails with UNAUTHORIZED and sends nothing', async () => {
    const fake = pendingClient();
    const session = new UpstreamSession(fake.client, null, 8);
    await expect(session.page('companies', '', { limit: 1 })).rejects.toMatchObject({
      extensions: { code: 'UNAUTHORIZED' },
    });
    expect(fake.calls).toEqual([]);
    expect(session.ledger.requests).toBe(0);
  });
});
