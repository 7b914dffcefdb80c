import * as crypto from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { decodeCursor, encodeCursor, fingerprint } from '../../src/pagination/cursor-codec.js';

vi.mock('node:crypto', async (importOriginal) => {
  const original = await importOriginal<typeof crypto>();
  return { ...original, timingSafeEqual: vi.fn(original.timingSafeEqual) };
});

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
    const [version, skip, done, mac, boundTo, upstream] = cursor.split('.') as string[];
    const join = (...parts: (string | undefined)[]) => parts.join('.');
    for (const bad of [
      join(version, skip, done, mac, boundTo, Buffer.from('abd').toString('base64url')),
      join(version, skip, done, mac, boundTo, ''),
      join(version, skip, done, `${mac!.slice(0, -1)}A`, boundTo, upstream),
      join(version, '101', done, mac, boundTo, upstream),
      join(version, '-1', done, mac, boundTo, upstream),
      join(version, skip, '2', mac, boundTo, upstream),
      join('c1', skip, done, mac, boundTo, upstream),
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

  it('lets a page of edges share one signature, each still a valid position', () => {
    const a = encodeCursor({ upstream: 'abc', skip: 2, done: false }, bound, secret);
    const b = encodeCursor({ upstream: 'abc', skip: 9, done: false }, bound, secret);
    expect(a.split('.').slice(3)).toEqual(b.split('.').slice(3));
    expect(decodeCursor(b, bound, secret).skip).toBe(9);
  });

  it('fingerprints differ by filters and are short', () => {
    expect(fingerprint('a?x=1')).not.toBe(fingerprint('a?x=2'));
    expect(fingerprint('a?x=1')).toHaveLength(12);
  });

  it('compares signatures in constant time, and refuses a tampered one', () => {
    const cursor = encodeCursor({ upstream: 'abc', skip: 2, done: false }, bound, secret);
    const parts = cursor.split('.');
    const mac = parts[4]!;
    const flipped = `${mac[0] === 'A' ? 'B' : 'A'}${mac.slice(1)}`;
    const tampered = [...parts.slice(0, 4), flipped, ...parts.slice(5)].join('.');
    vi.mocked(crypto.timingSafeEqual).mockClear();
    expect(() => decodeCursor(tampered, bound, secret)).toThrowError(
      expect.objectContaining({ extensions: { code: 'INVALID_INPUT', argument: 'after' } }),
    );
    expect(crypto.timingSafeEqual).toHaveBeenCalledTimes(1);
    const shorter = [...parts.slice(0, 4), mac.slice(1), ...parts.slice(5)].join('.');
    expect(() => decodeCursor(shorter, bound, secret)).toThrowError(/not a cursor this gateway/);
  });
});
