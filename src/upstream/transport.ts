import { Pool, type Dispatcher } from 'undici';
import { defaultConfig } from '../config.js';
import { buildPageQuery } from './build-query.js';
import { endpoints } from './endpoints.js';
import type { ListEnvelope, UpstreamRecord } from './types.js';
import type { UpstreamCall } from './upstream-call.js';
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

/** A request option: called once undici puts the request on a connection. */
const ON_CONNECTION = Symbol('onConnection');

/**
 * An undici interceptor that calls a request's {@link ON_CONNECTION} when undici puts it on a
 * connection (`onRequestStart`), so that its timeout counts from there, not from the queue.
 */
const tellOnConnection: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (opts, handler) => {
  const onConnection = (opts as { [ON_CONNECTION]?: () => void })[ON_CONNECTION];
  if (!onConnection) return dispatch(opts, handler);
  return dispatch(opts, {
    onRequestStart(controller, context) {
      onConnection();
      return handler.onRequestStart?.(controller, context);
    },
    onRequestUpgrade: (...args) => handler.onRequestUpgrade?.(...args),
    onResponseStart: (...args) => handler.onResponseStart?.(...args),
    onResponseData: (...args) => handler.onResponseData?.(...args),
    onResponseEnd: (...args) => handler.onResponseEnd?.(...args),
    onResponseError: (...args) => handler.onResponseError?.(...args),
  });
};

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
  const dispatcher = pool.compose(tellOnConnection);
  const { timeoutMs } = options;

  return {
    async call({ endpoint, filterQuery, cursor, limit, apiKey, signal, traceHeaders }) {
      const query = buildPageQuery(filterQuery, { cursor, limit });
      const path = `${prefix}${endpoints[endpoint].path}?${query}`;
      let response: Dispatcher.ResponseData;
      let text: string;
      // One deadline for the exchange, headers and body together, started once the request is
      // on a connection: time queued for one of the pool's connections (the gateway's own load)
      // is never counted as the service's. One controller and one timer per request, following
      // the caller's signal by hand: AbortSignal.timeout and AbortSignal.any cost a timer, weak
      // references and a finalization-registry entry each, per request (BENCHMARKS.md).
      const controller = new AbortController();
      let sent = false;
      let timedOut = false;
      let timer: NodeJS.Timeout | undefined;
      const onConnection = () => {
        sent = true;
        timer = setTimeout(() => {
          timedOut = true;
          controller.abort();
        }, timeoutMs);
      };
      const follow = () => controller.abort(signal?.reason);
      if (signal?.aborted) follow();
      else signal?.addEventListener('abort', follow, { once: true });
      try {
        response = await dispatcher.request({
          origin,
          path,
          method: 'GET',
          headers:
            traceHeaders === undefined
              ? { 'x-api-key': apiKey, accept: 'application/json' }
              : { 'x-api-key': apiKey, accept: 'application/json', ...traceHeaders },
          signal: controller.signal,
          [ON_CONNECTION]: onConnection,
        } as Dispatcher.RequestOptions);
        text = await response.body.text();
      } catch (error) {
        // The caller's abort first: whatever undici rejected with then, it is not the service's.
        if (signal?.aborted && !sent) {
          throw unavailable('queued', 'the request waited for a free connection to the service');
        }
        if (signal?.aborted) throw unavailable('aborted', 'the request was aborted');
        if (timedOut) {
          throw unavailable('timeout', `no complete answer within ${timeoutMs} ms of being sent`);
        }
        throw networkError(error, timeoutMs);
      } finally {
        clearTimeout(timer);
        signal?.removeEventListener('abort', follow);
      }
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      const { statusCode } = response;
      if (statusCode >= 200 && statusCode < 300) {
        if (!isEnvelope(body)) {
          throw unavailable(
            'malformed',
            `malformed response body (HTTP ${statusCode})`,
            statusCode,
          );
        }
        return { envelope: body, bytes: text.length };
      }
      throw errorFromResponse(statusCode, body, response.headers['retry-after']);
    },
    queued: () => (pool instanceof Pool ? pool.stats.queued : 0),
    async close() {
      if (!options.dispatcher) await pool.close();
    },
  };
}
