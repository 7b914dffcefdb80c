import { describe, expect, it } from 'vitest';
import { buildFilterQuery, buildPageQuery } from '../../src/upstream/build-query.js';

describe('buildFilterQuery', () => {
  it('writes lists as repeated keys, sorted, in the endpoint table order', () => {
    expect(
      buildFilterQuery('execMoves', {
        until: '2025-01-01',
        roleSeniority: ['vp', 'c_level'],
        companyId: 'c',
      }),
    ).toBe('companyId=c&roleSeniority=c_level&roleSeniority=vp&until=2025-01-01');
  });

  it('gives equal strings for equal filters', () => {
    expect(buildFilterQuery('fundingEvents', { round: ['b', 'a'], country: 'DE' })).toBe(
      buildFilterQuery('fundingEvents', { country: 'DE', round: ['a', 'b'] }),
    );
  });

  it('encodes values so that none can add or change a parameter', () => {
    const query = buildFilterQuery('companies', { search: 'a&limit=1#x=y', domain: 'b=c' });
    const params = new URLSearchParams(query);
    expect([...params.keys()]).toEqual(['search', 'domain']);
    expect(params.get('search')).toBe('a&limit=1#x=y');
    expect(query).not.toMatch(/[#]|&limit/);
  });

  it('skips null and undefined, keeps false and 0', () => {
    expect(
      buildFilterQuery('acquisitions', { isMerger: false, minAmountUsd: 0, companyId: null }),
    ).toBe('minAmountUsd=0&isMerger=false');
  });
});

describe('buildPageQuery', () => {
  it('appends cursor and limit', () => {
    expect(buildPageQuery('round=seed', { cursor: 'a+b/c=', limit: 20 })).toBe(
      'round=seed&cursor=a%2Bb%2Fc%3D&limit=20',
    );
    expect(buildPageQuery('', { cursor: null, limit: 5 })).toBe('limit=5');
  });

  it('writes what URLSearchParams writes of the filters, the cursor and the limit', () => {
    const cursors = [null, 'eyJpZCI6MX0=', 'a b&c=d?e#f%g', 'é✓ 😀', '+/='];
    const filters = ['', 'search=a+b%26c', 'round=seed&round=series_a&minAmountUsd=5'];
    for (const filterQuery of filters) {
      for (const cursor of cursors) {
        const params = new URLSearchParams(filterQuery);
        if (cursor) params.append('cursor', cursor);
        params.append('limit', '37');
        expect(buildPageQuery(filterQuery, { cursor, limit: 37 })).toBe(params.toString());
      }
    }
  });
});
