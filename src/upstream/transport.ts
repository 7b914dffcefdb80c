import { Pool, type Dispatcher } from 'undici';
import { defaultConfig } from '../config.js';
import { buildPageQuery } from './build-query.js';
import { endpoints } from './endpoints.js';
import type { ListEnvelope, UpstreamRecord } from './types.js';
import type { UpstreamCall, UpstreamPage } from './upstream-call.js';
import { errorFromResponse, unavailable, type UpstreamError } from './upstream-error.js';

/** Options of {@link createTransport}. */
export interface TransportOptions {
  /** Base URL of the service; a path prefix before `/v1` is kept. */
  baseUrl: string;
  /** Time allowed for one exchange: from sending the request to the end of the body. */
  timeoutMs: number;
  /** Keep-alive connections (ignored with `dispatcher`); absent, `UPSTREAM_CONNECTIONS`' default. */
  connections?: number;
  /** Replaces the pool, e.g. with undici's `MockAgent` in tests. */
  dispatcher?: Dispatcher;
}

/** The innermost {@link UpstreamCall}: one HTTP GET, and the pool it runs on. */
export interface Transport {
  call: UpstreamCall;
  /** Requests waiting now for one of the pool's connections (0 with a `dispatcher` passed in). */
  queued(): number;
  /** Closes the keep-alive connections (not a `dispatcher` passed in). */
  close(): Promise<void>;
}

function isEnvelope(body: unknown): body is ListEnvelope<UpstreamRecord> {
  if (typeof body !== 'object' || body === null) return false;
  const { data, pagination, meta } = body as Partial<ListEnvelope<unknown>>;
  return (
    Array.isArray(data) &&
    typeof pagination === 'object' &&
    pagination !== null &&
    typeof pagination.hasMore === 'boolean' &&
    typeof meta === 'object' &&
    meta !== null
  );
}

function networkError(error: unknown, timeoutMs: number): UpstreamError {
  const code = (error as { code?: unknown }).code;
  switch (code) {
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return unavailable('timeout', `no answer within ${timeoutMs} ms`);
    case 'ECONNREFUSED':
      return unavailable('refused', 'connection refused');
    case 'UND_ERR_SOCKET':
    case 'ECONNRESET':
      return unavailable('reset', 'the connection was closed before a response arrived');
    case 'UND_ERR_ABORTED':
    case 'ABORT_ERR':
      return unavailable('aborted', 'the request was aborted');
    default:
      return unavailable(
        'network',
        typeof code === 'string' ? `network error ${code}` : 'network error',
      );
  }
}

/** What one GET brought back: its status, its `Retry-After`, its body as text. */
interface Answer {
  statusCode: number;
  retryAfter: string | string[] | undefined;
  text: string;
}

/**
 * One GET on `dispatcher`, its body gathered as text, with one deadline for the exchange (headers
 * and body together) started once undici puts the request on a connection: time queued for one of
 * the pool's connections (the gateway's own load) is never counted as the service's. It follows
 * `signal` (the operation's) by hand, and rejects with the `UpstreamError` that says why.
 *
 * A handler of undici's dispatch API, not `request()`: no body stream, no handler wrapped in
 * another, no interceptor to see the connection, one timer and one listener per request: about a
 * fifth of the CPU of an upstream exchange, which a nested query pays per request (BENCHMARKS.md).
 */
function get(
  dispatcher: Dispatcher,
  options: Dispatcher.DispatchOptions,
  signal: AbortSignal | undefined,
  timeoutMs: number,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let controller: Dispatcher.DispatchController | undefined;
    let timer: NodeJS.Timeout | undefined;
    let settled = false;
    let statusCode = 0;
    let retryAfter: string | string[] | undefined;
    const chunks: Buffer[] = [];
    const settle = () => {
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', follow);
    };
    const fail = (error: UpstreamError) => {
      if (settled) return;
      settle();
      reject(error);
    };
    // The caller's abort: whatever undici says then, it is not the service's. A request still
    // queued is given up at once, and aborted when it reaches a connection.
    function follow() {
      fail(
        controller
          ? unavailable('aborted', 'the request was aborted')
          : unavailable('queued', 'the request waited for a free connection to the service'),
      );
      controller?.abort(signal?.reason);
    }
    if (signal?.aborted) return follow();
    signal?.addEventListener('abort', follow, { once: true });
    dispatcher.dispatch(options, {
      onRequestStart(started) {
        if (settled) return started.abort(signal?.reason ?? new Error('given up while queued'));
        controller = started;
        timer = setTimeout(() => {
          fail(unavailable('timeout', `no complete answer within ${timeoutMs} ms of being sent`));
          started.abort(new Error('timed out'));
        }, timeoutMs);
      },
      onResponseStart(_controller, status, headers) {
        statusCode = status;
        retryAfter = headers['retry-after'];
      },
      onResponseData(_controller, chunk) {
        chunks.push(chunk);
      },
      onResponseEnd() {
        if (settled) return;
        settle();
        const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
        resolve({ statusCode, retryAfter, text: body.toString('utf8') });
      },
      onResponseError(_controller, error) {
        fail(networkError(error, timeoutMs));
      },
    });
  });
}

/** The page an answer carries, or the `UpstreamError` it says. */
function pageOf({ statusCode, retryAfter, text }: Answer): UpstreamPage {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (statusCode >= 200 && statusCode < 300) {
    if (!isEnvelope(body)) {
      throw unavailable('malformed', `malformed response body (HTTP ${statusCode})`, statusCode);
    }
    return { envelope: body, bytes: text.length };
  }
  throw errorFromResponse(statusCode, body, retryAfter);
}

/**
 * Sends one GET over an undici keep-alive pool and returns facts: the success envelope with the
 * size of its body, or an `UpstreamError` with the status, the service's code, `retryAfter` and
 * `requestId`. It books nothing (the `ledger` policy does) and holds no per-caller state: the key
 * comes with each call.
 */
export function createTransport(options: TransportOptions): Transport {
  const base = new URL(options.baseUrl);
  const origin = base.origin;
  const prefix = base.pathname.replace(/\/+$/, '');
  const pool =
    options.dispatcher ??
    new Pool(origin, {
      connections: options.connections ?? defaultConfig.upstreamConnections,
      keepAliveTimeout: 30_000,
    });
  const { timeoutMs } = options;

  return {
    call({ endpoint, filterQuery, cursor, limit, apiKey, signal, traceHeaders }) {
      const query = buildPageQuery(filterQuery, { cursor, limit });
      const path = `${prefix}${endpoints[endpoint].path}?${query}`;
      return get(
        pool,
        {
          origin,
          path,
          method: 'GET',
          headers:
            traceHeaders === undefined
              ? { 'x-api-key': apiKey, accept: 'application/json' }
              : { 'x-api-key': apiKey, accept: 'application/json', ...traceHeaders },
        },
        signal,
        timeoutMs,
      ).then(pageOf);
    },
    queued: () => (pool instanceof Pool ? pool.stats.queued : 0),
    async close() {
      if (!options.dispatcher) await pool.close();
    },
  };
}
