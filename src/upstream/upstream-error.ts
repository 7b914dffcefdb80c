import { ErrorCode, UPSTREAM_CODES, gatewayError } from '../errors.js';

/** Retry-After as whole seconds: a delay in seconds or an HTTP date; undefined if absent or bad. */
export function parseRetryAfter(header: string | string[] | undefined, now = Date.now()) {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}

interface ErrorBody {
  error?: { code?: unknown; message?: unknown };
  meta?: { requestId?: unknown };
}

/**
 * Maps a failed upstream response to the GraphQL error the client sees. The service's five codes
 * pass through with its message and request id; anything else (5xx, an unknown code, an error body
 * that is not the spec's) means the service is not usable right now: UPSTREAM_UNAVAILABLE.
 */
export function mapUpstreamError(
  status: number,
  body: unknown,
  retryAfterHeader: string | string[] | undefined,
) {
  const { error, meta } = (typeof body === 'object' && body !== null ? body : {}) as ErrorBody;
  const code = typeof error?.code === 'string' ? error.code : undefined;
  const upstreamMessage = typeof error?.message === 'string' ? error.message : undefined;
  const requestId = typeof meta?.requestId === 'string' ? meta.requestId : undefined;
  const retryAfter = parseRetryAfter(retryAfterHeader);
  if (code !== undefined && UPSTREAM_CODES.has(code) && status < 500) {
    return gatewayError(code as ErrorCode, `Business-Signals API: ${upstreamMessage ?? code}`, {
      requestId,
      retryAfter,
      upstreamStatus: status,
    });
  }
  const what = code ? `${status} ${code}` : `HTTP ${status}`;
  return gatewayError(
    ErrorCode.UPSTREAM_UNAVAILABLE,
    `The Business-Signals API failed (${what})${upstreamMessage ? `: ${upstreamMessage}` : ''}.`,
    { requestId, retryAfter, upstreamStatus: status },
  );
}

/** UPSTREAM_UNAVAILABLE for a request that got no usable response at all. */
export function unavailable(reason: string) {
  return gatewayError(
    ErrorCode.UPSTREAM_UNAVAILABLE,
    `The Business-Signals API is unavailable: ${reason}.`,
  );
}
