import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor, fingerprint } from '../../src/pagination/cursor-codec.js';

const secret = 'test-secret';
const bound = fingerprint('fundingEvents?round=seed');

describe('cursor codec', () => {
  it('round-trips a position', () => {
    for (const position of [
      { upstream: null, skip: 0, done: false },
      { upstream: 'eyJrIjoxfQ', skip: 7, done: false },
      { upstream: null, skip: 0, done: true },
    ]) {
      expect(decodeCursor(encodeCursor(position, bound, secret), bound, secret)).toEqual(position);
    }
  });

  it('rejects a cursor bound to other filters, naming the argument', () => {
    const cursor = encodeCursor({ upstream: 'x', skip: 0, done: false }, bound, secret);
    const other = fingerprint('fundingEvents?round=series_a');
    expect(() => decodeCursor(cursor, other, secret)).toThrowError(
      expect.objectContaining({
        message: expect.stringContaining('different list or different filters'),
        extensions: { code: 'INVALID_INPUT', argument: 'after' },
      }),
    );
  });

  it('rejects altered, foreign and garbage cursors', () => {
    const cursor = encodeCursor({ upstream: 'abc', skip: 2, done: false }, bound, secret);
    const [version, payload, mac] = cursor.split('.') as [string, string, string];
    const altered = Buffer.from(JSON.stringify(['abc', 0, 0, bound])).toString('base64url');
    for (const bad of [
      `${version}.${altered}.${mac}`,
      `${version}.${payload}.${mac.slice(0, -1)}A`,
      encodeCursor({ upstream: 'abc', skip: 2, done: false }, bound, 'another-secret'),
      'not-a-cursor',
      '',
      `${cursor}.extra`,
    ]) {
      expect(() => decodeCursor(bad, bound, secret), bad).toThrowError(
        expect.objectContaining({ extensions: { code: 'INVALID_INPUT', argument: 'after' } }),
      );
    }
  });

  it('fingerprints differ by filters and are short', () => {
    expect(fingerprint('a?x=1')).not.toBe(fingerprint('a?x=2'));
    expect(fingerprint('a?x=1')).toHaveLength(12);
  });
});
