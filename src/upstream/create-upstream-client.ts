import { Pool, type Dispatcher } from 'undici';
import { endpoints, type EndpointName, type EndpointRecords } from './endpoints.js';
import type { ListEnvelope } from './types.js';
import { mapUpstreamError, unavailable } from './upstream-error.js';

/** Options of {@link createUpstreamClient}. */
export interface UpstreamClientOptions {
  /** Base URL of the service; a path prefix before `/v1` is kept. */
  baseUrl: string;
  /** Time allowed for the response headers, and again for the body. */
  timeoutMs: number;
  /** Keep-alive connections in the pool (ignored with `dispatcher`). */
  connections?: number;
  /** Replaces the pool, e.g. with undici's `MockAgent` in tests. */
  dispatcher?: Dispatcher;
}

/**
 * The one way the gateway talks to the Business-Signals service. Every upstream request passes
 * through {@link UpstreamClient.list}, so retries, timeouts, circuit breaking, caching and metrics
 * plug in here. It holds no per-caller state: the key comes with each call.
 */
export interface UpstreamClient {
  /**
   * GETs one page. Resolves with the parsed success envelope; rejects with a GraphQLError whose
   * `extensions.code` is the upstream's code or UPSTREAM_UNAVAILABLE.
   */
  list<E extends EndpointName>(
    endpoint: E,
    query: string,
    apiKey: string,
  ): Promise<ListEnvelope<EndpointRecords[E]>>;
  /** Closes the keep-alive connections. */
  close(): Promise<void>;
}

function isEnvelope(body: unknown): body is ListEnvelope<unknown> {
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

function describeNetworkError(error: unknown, timeoutMs: number) {
  const code = (error as { code?: unknown }).code;
  switch (code) {
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return `no answer within ${timeoutMs} ms`;
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'UND_ERR_SOCKET':
    case 'ECONNRESET':
      return 'the connection was closed before a response arrived';
    default:
      return typeof code === 'string' ? `network error ${code}` : 'network error';
  }
}

/** Creates the client over an undici keep-alive pool. */
export function createUpstreamClient(options: UpstreamClientOptions): UpstreamClient {
  const base = new URL(options.baseUrl);
  const origin = base.origin;
  const prefix = base.pathname.replace(/\/+$/, '');
  const dispatcher =
    options.dispatcher ??
    new Pool(origin, { connections: options.connections ?? 64, keepAliveTimeout: 30_000 });
  const { timeoutMs } = options;

  return {
    async list(endpoint, query, apiKey) {
      const path = `${prefix}${endpoints[endpoint].path}${query ? `?${query}` : ''}`;
      let response: Dispatcher.ResponseData;
      let text: string;
      try {
        response = await dispatcher.request({
          origin,
          path,
          method: 'GET',
          headers: { 'x-api-key': apiKey, accept: 'application/json' },
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        });
        text = await response.body.text();
      } catch (error) {
        throw unavailable(describeNetworkError(error, timeoutMs));
      }
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      const { statusCode } = response;
      if (statusCode >= 200 && statusCode < 300) {
        if (isEnvelope(body)) return body as ListEnvelope<EndpointRecords[typeof endpoint]>;
        throw unavailable(`malformed response body (HTTP ${statusCode})`);
      }
      throw mapUpstreamError(statusCode, body, response.headers['retry-after']);
    },
    async close() {
      if (!options.dispatcher) await dispatcher.close();
    },
  };
}
