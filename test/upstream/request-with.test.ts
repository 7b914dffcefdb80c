import { describe, expect, it } from 'vitest';
import { CreditBudget } from '../../src/credits/credit-budget.js';
import { CreditLedger } from '../../src/credits/credit-ledger.js';
import { requestWith, type UpstreamRequest } from '../../src/upstream/upstream-call.js';

/** A request with every field set, the optional ones included. */
function fullRequest(): UpstreamRequest {
  return {
    endpoint: 'execMoves',
    filterQuery: 'companyId=c1',
    cursor: 'cursor-1',
    limit: 20,
    skip: 3,
    apiKey: 'key-1',
    ledger: new CreditLedger(),
    budget: new CreditBudget(),
    signal: new AbortController().signal,
    deadline: 1_000,
    fresh: true,
    traceHeaders: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
  };
}

describe('requestWith', () => {
  it('keeps every field it is not asked to change, the optional ones included', () => {
    const request = fullRequest();
    const copy = requestWith(request, {});
    expect(copy).not.toBe(request);
    expect(copy).toEqual(request);
    expect(Object.keys(copy).sort()).toEqual(Object.keys(request).sort());
  });

  it('changes the fields given, and only those', () => {
    const request = fullRequest();
    const ledger = new CreditLedger();
    const signal = new AbortController().signal;
    const traceHeaders = { traceparent: '00-1af7651916cd43dd8448eb211c80319c-c7ad6b7169203331-01' };
    const copy = requestWith(request, { limit: 5, ledger, signal, deadline: 2_000, traceHeaders });
    expect(copy).toEqual({ ...request, limit: 5, ledger, signal, deadline: 2_000, traceHeaders });
    expect(request.limit).toBe(20);
  });

  it('keeps the request’s field where a change is undefined', () => {
    const request = fullRequest();
    const copy = requestWith(request, { signal: undefined, deadline: undefined });
    expect(copy.signal).toBe(request.signal);
    expect(copy.deadline).toBe(1_000);
  });

  it('leaves a field the request lacks undefined', () => {
    const { budget, fresh, traceHeaders, signal, deadline, ...bare } = fullRequest();
    void [budget, fresh, traceHeaders, signal, deadline];
    const copy = requestWith(bare, { limit: 2 });
    expect(copy).toMatchObject({ ...bare, limit: 2 });
    expect(copy.budget).toBeUndefined();
    expect(copy.fresh).toBeUndefined();
    expect(copy.signal).toBeUndefined();
  });
});
