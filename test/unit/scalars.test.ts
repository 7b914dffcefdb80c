import { describe, expect, it } from 'vitest';
import { parseDateTime, toSafeInt } from '../../src/schema/scalars.js';

describe('SafeInt', () => {
  it('carries integers beyond 32 bits exactly', () => {
    expect(toSafeInt(4_000_000_000_000)).toBe(4_000_000_000_000);
    expect(toSafeInt(2 ** 31)).toBe(2147483648);
    expect(toSafeInt(Number.MAX_SAFE_INTEGER)).toBe(Number.MAX_SAFE_INTEGER);
    expect(toSafeInt('2150000000')).toBe(2150000000);
    expect(toSafeInt(-5)).toBe(-5);
  });

  it('refuses what it cannot carry exactly', () => {
    for (const bad of [2 ** 53, 1.5, '12.5', 'abc', null, Number.NaN, {}]) {
      expect(() => toSafeInt(bad), String(bad)).toThrowError(
        expect.objectContaining({ extensions: { code: 'INVALID_INPUT' } }),
      );
    }
  });
});

describe('DateTime', () => {
  it('accepts ISO-8601 dates and date-times unchanged', () => {
    for (const good of [
      '2024-05-01',
      '2024-05-01T12:00:00Z',
      '2024-05-01T12:00:00.123Z',
      '2024-05-01T12:00:00+02:00',
      '2024-05-01T12:00Z',
    ]) {
      expect(parseDateTime(good)).toBe(good);
    }
  });

  it('rejects other strings with INVALID_INPUT', () => {
    for (const bad of [
      'yesterday',
      '2024-13-45T00:00:00Z',
      '1714557600',
      '',
      5,
      '2024-05-01 12:00',
    ]) {
      expect(() => parseDateTime(bad), String(bad)).toThrowError(
        expect.objectContaining({ extensions: { code: 'INVALID_INPUT' } }),
      );
    }
  });
});
