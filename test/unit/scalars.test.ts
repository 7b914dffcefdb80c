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

  it('accepts every real calendar date, time and zone offset', () => {
    for (const good of [
      '2024-02-29',
      '2000-02-29T00:00:00Z',
      '2024-12-31T23:59:59.999999999Z',
      '2024-01-31T00:00:00+14:00',
      '2024-01-31T00:00:00-14:00',
      '2024-05-01T12:00:00+0530',
      '2024-05-01T12:00:00-09:30',
    ]) {
      expect(parseDateTime(good)).toBe(good);
    }
  });

  it('rejects dates and times that do not exist, which Date.parse would roll over', () => {
    for (const bad of [
      '2024-04-31T10:00:00Z',
      '2023-02-29T00:00:00Z',
      '1900-02-29',
      '2024-13-01',
      '2024-00-10',
      '2024-05-00',
      '2024-05-32',
      '2024-05-01T24:00:00Z',
      '2024-05-01T25:00:00Z',
      '2024-05-01T12:60:00Z',
      '2024-05-01T12:00:60Z',
      '2024-05-01T12:00:00+14:01',
      '2024-05-01T12:00:00-15:00',
      '2024-05-01T12:00:00+23:59',
      '2024-05-01T12:00:00+02:60',
      '2024-05-01T12:00:00.1234567890Z',
    ]) {
      expect(() => parseDateTime(bad), bad).toThrowError(
        expect.objectContaining({ extensions: { code: 'INVALID_INPUT' } }),
      );
    }
  });
});
