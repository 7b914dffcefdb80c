import { describe, expect, it } from 'vitest';
import { wantsFresh } from '../../src/context.js';

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
