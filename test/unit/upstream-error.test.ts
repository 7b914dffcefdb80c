import { describe, expect, it } from 'vitest';
import { mapUpstreamError, parseRetryAfter } from '../../src/upstream/upstream-error.js';

const body = (code: string, message = 'msg') => ({
  success: false,
  error: { code, message },
  meta: { requestId: '6f1c1f6e-57d1-4a5e-9f55-0d6c2b1d8e11' },
});

describe('mapUpstreamError', () => {
  it.each([
    [400, 'INVALID_INPUT'],
    [401, 'UNAUTHORIZED'],
    [402, 'PAYMENT_REQUIRED'],
    [403, 'FORBIDDEN'],
    [429, 'TOO_MANY_REQUESTS'],
  ])('passes %i %s through with the request id', (status, code) => {
    const error = mapUpstreamError(status, body(code, 'limit must be <= 100'), undefined);
    expect(error.message).toBe('Business-Signals API: limit must be <= 100');
    expect(error.extensions).toEqual({
      code,
      requestId: '6f1c1f6e-57d1-4a5e-9f55-0d6c2b1d8e11',
      upstreamStatus: status,
    });
  });

  it('adds retryAfter from the header', () => {
    const error = mapUpstreamError(429, body('TOO_MANY_REQUESTS'), '3');
    expect(error.extensions).toMatchObject({ code: 'TOO_MANY_REQUESTS', retryAfter: 3 });
  });

  it('treats 5xx, unknown codes and non-envelope bodies as UPSTREAM_UNAVAILABLE', () => {
    expect(mapUpstreamError(500, body('INTERNAL_ERROR'), undefined).extensions.code).toBe(
      'UPSTREAM_UNAVAILABLE',
    );
    expect(mapUpstreamError(418, body('TEAPOT'), undefined).extensions.code).toBe(
      'UPSTREAM_UNAVAILABLE',
    );
    expect(mapUpstreamError(502, '<html>bad gateway</html>', undefined).message).toContain(
      'HTTP 502',
    );
    // A known code on a 5xx is still a server failure.
    expect(mapUpstreamError(503, body('UNAUTHORIZED'), undefined).extensions.code).toBe(
      'UPSTREAM_UNAVAILABLE',
    );
  });
});

describe('parseRetryAfter', () => {
  it('reads seconds and HTTP dates', () => {
    expect(parseRetryAfter('7')).toBe(7);
    expect(parseRetryAfter(['2'])).toBe(2);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:05 GMT', now)).toBe(5);
    expect(parseRetryAfter(undefined)).toBeUndefined();
    expect(parseRetryAfter('soon')).toBeUndefined();
  });
});
