import { describe, expect, it } from 'vitest';
import { wantsFresh } from '../../src/context.js';
import { CreditLedger } from '../../src/upstream/credit-ledger.js';
import { keyHash, pageKey } from '../../src/upstream/page-cache/page-key.js';
import type { UpstreamRequest } from '../../src/upstream/upstream-call.js';

function request(overrides: Partial<UpstreamRequest> = {}): UpstreamRequest {
  return {
    endpoint: 'companies',
    filterQuery: 'country=US',
    cursor: null,
    limit: 20,
    skip: 0,
    apiKey: 'sk_live_0123456789abcdef',
    ledger: new CreditLedger(),
    ...overrides,
  };
}

describe('pageKey', () => {
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

describe('wantsFresh', () => {
  const fresh = (headers: Record<string, string>) => wantsFresh(new Headers(headers));
  it.each([
    [{ 'cache-control': 'no-cache' }, true],
    [{ 'cache-control': 'max-age=0, No-Cache' }, true],
    [{ 'cache-control': 'no-store' }, true],
    [{ pragma: 'no-cache' }, true],
    [{ 'cache-control': 'max-age=60' }, false],
    [{ 'cache-control': 'no-cache-please' }, false],
    [{}, false],
  ])('%j → %s', (headers, expected) => {
    expect(fresh(headers)).toBe(expected);
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
    expect({ ...child }).toEqual({ requests: 1, retries: 0, used: 3, saved: 5, remaining: 97 });
    expect({ ...parent }).toEqual({ requests: 1, retries: 0, used: 3, saved: 5, remaining: 97 });
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
