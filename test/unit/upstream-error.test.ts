import { describe, expect, it } from 'vitest';
import { fromUpstreamError } from '../../src/errors.js';
import {
  errorFromResponse,
  parseRetryAfter,
  unavailable,
  UpstreamError,
} from '../../src/upstream/upstream-error.js';

const body = (code: string, message = 'msg') => ({
  success: false,
  error: { code, message },
  meta: { requestId: '6f1c1f6e-57d1-4a5e-9f55-0d6c2b1d8e11' },
});

describe('errorFromResponse', () => {
  it.each([
    [400, 'INVALID_INPUT'],
    [401, 'UNAUTHORIZED'],
    [402, 'PAYMENT_REQUIRED'],
    [403, 'FORBIDDEN'],
    [429, 'TOO_MANY_REQUESTS'],
  ])('passes %i %s through with the request id, not retryable', (status, code) => {
    const error = errorFromResponse(status, body(code, 'limit must be <= 100'), undefined);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({
      code,
      status,
      failure: 'status',
      requestId: '6f1c1f6e-57d1-4a5e-9f55-0d6c2b1d8e11',
      retryable: false,
      message: 'Business-Signals API: limit must be <= 100',
    });
  });

  it('adds retryAfter from the header', () => {
    const error = errorFromResponse(429, body('TOO_MANY_REQUESTS'), '3');
    expect(error).toMatchObject({ code: 'TOO_MANY_REQUESTS', retryAfter: 3 });
  });

  it('treats 5xx, unknown codes and non-envelope bodies as UPSTREAM_UNAVAILABLE', () => {
    expect(errorFromResponse(500, body('INTERNAL_ERROR'), undefined).code).toBe(
      'UPSTREAM_UNAVAILABLE',
    );
    expect(errorFromResponse(418, body('TEAPOT'), undefined).code).toBe('UPSTREAM_UNAVAILABLE');
    expect(errorFromResponse(502, '<html>bad gateway</html>', undefined).message).toContain(
      'HTTP 502',
    );
    // A known code on a 5xx is still a server failure.
    expect(errorFromResponse(503, body('UNAUTHORIZED'), undefined).code).toBe(
      'UPSTREAM_UNAVAILABLE',
    );
  });

  it('marks transient faults retryable: 500, 502, 503, 504 and network failures', () => {
    for (const status of [500, 502, 503, 504]) {
      expect(errorFromResponse(status, undefined, undefined).retryable, String(status)).toBe(true);
    }
    expect(errorFromResponse(501, undefined, undefined).retryable).toBe(false);
    for (const failure of ['timeout', 'refused', 'reset', 'network'] as const) {
      expect(unavailable(failure, 'x').retryable, failure).toBe(true);
    }
    expect(unavailable('malformed', 'x', 200).retryable).toBe(false);
  });

  it('calls an outage what a stale page may answer: 5xx, no answer, the breaker open; never a 4xx', () => {
    for (const status of [500, 501, 502, 503, 504, 599]) {
      expect(errorFromResponse(status, undefined, undefined).outage, String(status)).toBe(true);
    }
    for (const failure of ['timeout', 'refused', 'reset', 'network', 'open-circuit'] as const) {
      expect(unavailable(failure, 'x').outage, failure).toBe(true);
    }
    expect(unavailable('malformed', 'x', 200).outage).toBe(true);
    for (const [status, code] of [
      [400, 'INVALID_INPUT'],
      [401, 'UNAUTHORIZED'],
      [402, 'PAYMENT_REQUIRED'],
      [403, 'FORBIDDEN'],
      [429, 'TOO_MANY_REQUESTS'],
      [418, 'TEAPOT'],
    ] as const) {
      expect(errorFromResponse(status, body(code), undefined).outage, String(status)).toBe(false);
    }
    for (const failure of ['aborted', 'queued', 'deadline', 'no-key', 'budget'] as const) {
      expect(unavailable(failure, 'x').outage, failure).toBe(false);
    }
  });
});

describe('fromUpstreamError', () => {
  it('makes the GraphQL error at the schema edge: code, message and facts in extensions', () => {
    const error = fromUpstreamError(errorFromResponse(429, body('TOO_MANY_REQUESTS', 'slow'), '2'));
    expect(error.message).toBe('Business-Signals API: slow');
    expect(error.extensions).toEqual({
      code: 'TOO_MANY_REQUESTS',
      requestId: '6f1c1f6e-57d1-4a5e-9f55-0d6c2b1d8e11',
      retryAfter: 2,
      upstreamStatus: 429,
    });
    expect(fromUpstreamError(unavailable('refused', 'connection refused')).extensions).toEqual({
      code: 'UPSTREAM_UNAVAILABLE',
    });
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
