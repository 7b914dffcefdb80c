import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import {
  byDiscovery,
  byName,
  get,
  ids,
  SMALL_SIZES,
  walk,
  type ErrorBody,
  type SuccessBody,
} from './sandbox-client.js';

let sandbox: Sandbox;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, quiet: true, sizes: SMALL_SIZES, seed: 11 });
});
afterAll(async () => {
  await sandbox?.close();
});

describe('pagination', () => {
  it('returns every matching record exactly once, in order, with credits adding up', async () => {
    const key = 'pagination-credits';
    sandbox.addKey(key, { credits: 10_000 });
    const expected = byDiscovery(
      sandbox.data.fundingEvents.filter((e) => e.round === 'seed' || e.round === 'series_a'),
    );
    const result = await walk(
      sandbox,
      '/v1/funding-events',
      { round: ['series_a', 'seed'] },
      key,
      [17],
    );
    expect(ids(result.records)).toEqual(ids(expected));
    expect(new Set(ids(result.records)).size).toBe(result.records.length);
    expect(result.pages).toBe(Math.ceil(expected.length / 17));
    expect(result.creditsUsed).toBe(expected.length);
    expect(result.lastRemaining).toBe(10_000 - expected.length);
    expect(sandbox.credits(key)).toBe(10_000 - expected.length);
  });

  it('allows the limit to change between pages', async () => {
    const expected = byName(sandbox.data.companies.filter((c) => c.hqCountry.code === 'US'));
    const result = await walk(
      sandbox,
      '/v1/companies',
      { country: 'US' },
      sandbox.keys.demo,
      [3, 50, 1, 100, 7],
    );
    expect(ids(result.records)).toEqual(ids(expected));
  });

  it('ends with hasMore false and nextCursor null, also on an empty list', async () => {
    const empty = await get(sandbox, '/v1/companies', { search: 'zzzz-no-such-word' });
    expect(empty.body).toMatchObject({
      data: [],
      pagination: { hasMore: false, nextCursor: null },
      meta: { creditsUsed: 0 },
    });
    const count = sandbox.data.investors.filter((i) => i.type === 'vc').length;
    expect(count).toBeLessThanOrEqual(100);
    const exact = await get(sandbox, '/v1/investors', { type: 'vc', limit: count });
    expect(exact.body.data).toHaveLength(count);
    expect(exact.body.pagination).toEqual({ hasMore: false, nextCursor: null });
  });

  it('uses a default page size of 20', async () => {
    const reply = await get(sandbox, '/v1/exec-moves');
    expect(reply.body.data).toHaveLength(20);
    expect(reply.body.pagination.hasMore).toBe(true);
    expect(reply.body.meta).toMatchObject({ endpoint: '/v1/exec-moves', creditsUsed: 20 });
  });

  it('keeps cursors stable while other readers page concurrently', async () => {
    const expected = ids(byDiscovery(sandbox.data.acquisitions));
    const walks = await Promise.all([
      walk(sandbox, '/v1/acquisitions', {}, sandbox.keys.demo, [9]),
      walk(sandbox, '/v1/acquisitions', {}, sandbox.keys.demo, [13]),
      walk(sandbox, '/v1/acquisitions', {}, sandbox.keys.demo, [100, 1]),
    ]);
    for (const w of walks) expect(ids(w.records)).toEqual(expected);
  });

  it('resumes a cursor on a fresh sandbox with the same seed', async () => {
    const first = await get(sandbox, '/v1/companies', { limit: 5 });
    const twin = await startSandbox({ port: 0, quiet: true, sizes: SMALL_SIZES, seed: 11 });
    try {
      const cursor = first.body.pagination.nextCursor as string;
      const here = await get(sandbox, '/v1/companies', { limit: 5, cursor });
      const there = await get(twin, '/v1/companies', { limit: 5, cursor });
      expect(ids(there.body.data)).toEqual(ids(here.body.data));
    } finally {
      await twin.close();
    }
  });
});

describe('cursor validation', () => {
  async function firstCursor(path: string, query: Record<string, string> = {}): Promise<string> {
    const reply = await get(sandbox, path, { ...query, limit: 2 });
    return reply.body.pagination.nextCursor as string;
  }

  it('rejects a cursor reused with different filters', async () => {
    const cursor = await firstCursor('/v1/funding-events', { round: 'seed' });
    const reply = await get<ErrorBody>(sandbox, '/v1/funding-events', {
      round: 'series_a',
      cursor,
    });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('INVALID_INPUT');
    expect(reply.body.error.message).toMatch(/cursor was issued for different filters/);
    const dropped = await get<ErrorBody>(sandbox, '/v1/funding-events', { cursor });
    expect(dropped.body.error.message).toMatch(/different filters/);
  });

  it('accepts the same filters in another key order or spelling', async () => {
    const cursor = await firstCursor('/v1/investors', { type: 'vc,angel', country: 'US' });
    const reply = await get(
      sandbox,
      '/v1/investors',
      `country=US&type=angel&type=vc&cursor=${encodeURIComponent(cursor)}`,
    );
    expect(reply.status).toBe(200);
  });

  it('rejects a cursor from another endpoint', async () => {
    const cursor = await firstCursor('/v1/companies');
    const reply = await get<ErrorBody>(sandbox, '/v1/investors', { cursor });
    expect(reply.status).toBe(400);
    expect(reply.body.error.message).toMatch(/cursor was issued for \/v1\/companies/);
  });

  it('rejects malformed and tampered cursors', async () => {
    const cursor = await firstCursor('/v1/exec-moves');
    const [payload, signature] = cursor.split('.') as [string, string];
    const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as unknown[];
    decoded[3] = '2099-01-01T00:00:00.000Z';
    const forged = `${Buffer.from(JSON.stringify(decoded)).toString('base64url')}.${signature}`;
    const flipped = `${payload}.${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`;
    for (const bad of ['garbage', forged, flipped, `${payload}.`, '.']) {
      const reply = await get<ErrorBody>(sandbox, '/v1/exec-moves', { cursor: bad });
      expect(reply.status, bad).toBe(400);
      expect(reply.body.error).toMatchObject({
        code: 'INVALID_INPUT',
        message: expect.stringMatching(/^cursor is malformed/),
      });
    }
  });
});

describe('credits', () => {
  it('truncates a page to the credits left and continues right after it', async () => {
    const key = 'three-credits';
    sandbox.addKey(key, { credits: 3 });
    const expected = ids(byName(sandbox.data.companies));
    const first = await get(sandbox, '/v1/companies', { limit: 10 }, key);
    expect(first.status).toBe(200);
    expect(ids(first.body.data)).toEqual(expected.slice(0, 3));
    expect(first.body.pagination.hasMore).toBe(true);
    expect(first.body.meta).toMatchObject({ creditsUsed: 3, creditsRemaining: 0 });
    const broke = await get<ErrorBody>(sandbox, '/v1/companies', { limit: 10 }, key);
    expect(broke.status).toBe(402);
    expect(broke.body.error.code).toBe('PAYMENT_REQUIRED');
    const rest = await get(sandbox, '/v1/companies', {
      limit: 2,
      cursor: first.body.pagination.nextCursor as string,
    });
    expect(ids(rest.body.data)).toEqual(expected.slice(3, 5));
  });

  it('charges one credit per record to the workspace of the key, and nothing for errors', async () => {
    const key = 'counted';
    sandbox.addKey(key, { credits: 100 });
    await get(sandbox, '/v1/investors', { limit: 7 }, key);
    await get(sandbox, '/v1/investors', { limit: 500 }, key);
    await get(sandbox, '/v1/investors', { search: 'no-such-investor-anywhere' }, key);
    const last = await get<SuccessBody>(sandbox, '/v1/acquisitions', { limit: 4 }, key);
    expect(last.body.meta.creditsRemaining).toBe(89);
    expect(sandbox.credits(key)).toBe(89);
    expect(sandbox.credits('no-such-key')).toBeUndefined();
  });

  it('gives the low-credit key five records in total', async () => {
    const first = await get(sandbox, '/v1/exec-moves', { limit: 100 }, sandbox.keys.lowCredit);
    expect(first.body.data).toHaveLength(5);
    expect(first.body.meta.creditsRemaining).toBe(0);
    const next = await get<ErrorBody>(sandbox, '/v1/exec-moves', {}, sandbox.keys.lowCredit);
    expect(next.status).toBe(402);
    sandbox.reset();
    expect(sandbox.credits(sandbox.keys.lowCredit)).toBe(5);
  });
});
