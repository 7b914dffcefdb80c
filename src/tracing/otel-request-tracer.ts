import {
  defaultTextMapSetter,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type TextMapGetter,
  type TextMapPropagator,
  type Tracer,
} from '@opentelemetry/api';
import { endpoints, type EndpointName } from '../upstream/endpoints.js';
import type { Exchange } from '../upstream/upstream-observer.js';
import type { RequestSpan, SentRequest, UpstreamTrace } from '../upstream/upstream-trace.js';
import { creditLogFields, type CreditExtensions } from '../credits/credit-extensions.js';
import type { RequestEnd, RequestTrace, RequestTracer } from './request-tracer.js';

/**
 * The attributes the gateway's spans carry beyond OpenTelemetry's HTTP and GraphQL conventions,
 * each named once. None holds a key, a token, a filter value or a cursor.
 */
export const GATEWAY_ATTRIBUTES = {
  requestId: 'gateway.request_id',
  errorCodes: 'gateway.error.codes',
  creditsUsed: 'gateway.credits.used',
  creditsSaved: 'gateway.credits.saved',
  creditsEstimate: 'gateway.credits.estimate',
  creditsBudget: 'gateway.credits.budget',
  creditsUncertain: 'gateway.credits.uncertain',
  upstreamRequests: 'gateway.upstream.requests',
  upstreamRetries: 'gateway.upstream.retries',
  upstreamEndpoint: 'gateway.upstream.endpoint',
  upstreamLimit: 'gateway.upstream.limit',
  upstreamRequestId: 'gateway.upstream.request_id',
} as const;

/** The events of an operation's span for the pages served without a request. */
export const SERVED_EVENTS = {
  cache: 'gateway.cache.hit',
  joined: 'gateway.request.joined',
  stale: 'gateway.cache.stale',
};

const HEADERS: TextMapGetter<Headers> = {
  get: (headers, key) => headers.get(key) ?? undefined,
  keys: (headers) => [...headers.keys()],
};

/** Options of {@link otelRequestTracer}. */
export interface OtelRequestTracerOptions {
  tracer: Tracer;
  /** Reads the caller's trace context and writes the upstream requests' (W3C Trace Context). */
  propagator: TextMapPropagator;
  /** The service's base URL: its host, port and path prefix name the client spans. */
  upstreamUrl: string;
  /** Flushes and stops the SDK. */
  shutdown: () => Promise<void>;
}

/**
 * Request traces on the OpenTelemetry API: a server span per GraphQL request (`POST /graphql`,
 * continuing the caller's `traceparent`), under it the operation's span (`query Name`), under
 * that a client span per upstream request sent (`GET /v1/companies`, its `traceparent` sent on),
 * and the pages served without a request as events of the operation's span.
 */
export function otelRequestTracer(options: OtelRequestTracerOptions): RequestTracer {
  const { tracer, propagator } = options;
  const base = new URL(options.upstreamUrl);
  const prefix = base.pathname.replace(/\/+$/, '');
  const scheme = base.protocol.slice(0, -1);
  const port = Number(base.port) || (scheme === 'https' ? 443 : 80);
  const pathOf = (endpoint: EndpointName) => `${prefix}${endpoints[endpoint].path}`;

  function upstreamTrace(parent: () => { span: Span; context: Context }): UpstreamTrace {
    return {
      send(request: SentRequest): RequestSpan {
        const path = pathOf(request.endpoint);
        const attributes: Attributes = {
          'http.request.method': 'GET',
          'url.path': path,
          'url.scheme': scheme,
          'server.address': base.hostname,
          'server.port': port,
          [GATEWAY_ATTRIBUTES.upstreamEndpoint]: request.endpoint,
          [GATEWAY_ATTRIBUTES.upstreamLimit]: request.limit,
        };
        if (request.resendCount > 0) attributes['http.request.resend_count'] = request.resendCount;
        const span = tracer.startSpan(
          `GET ${path}`,
          { kind: SpanKind.CLIENT, attributes },
          parent().context,
        );
        const carrier: Record<string, string> = {};
        propagator.inject(trace.setSpan(ROOT_CONTEXT, span), carrier, defaultTextMapSetter);
        const traceparent = carrier['traceparent'] ?? '';
        const tracestate = carrier['tracestate'];
        return {
          headers: tracestate ? { traceparent, tracestate } : { traceparent },
          end: (exchange) => endClientSpan(span, exchange),
        };
      },
      served(endpoint, credits, source) {
        parent().span.addEvent(SERVED_EVENTS[source], {
          [GATEWAY_ATTRIBUTES.upstreamEndpoint]: endpoint,
          'url.path': pathOf(endpoint),
          [GATEWAY_ATTRIBUTES.creditsSaved]: credits,
        });
      },
    };
  }

  return {
    start(request, route) {
      const caller = propagator.extract(ROOT_CONTEXT, request.headers, HEADERS);
      const server = tracer.startSpan(
        `${request.method} ${route}`,
        {
          kind: SpanKind.SERVER,
          attributes: {
            'http.request.method': request.method,
            'http.route': route,
            'url.path': route,
            'url.scheme': request.url.startsWith('https:') ? 'https' : 'http',
          },
        },
        caller,
      );
      const serverContext = trace.setSpan(caller, server);
      let operation: { span: Span; context: Context } | undefined;
      let operationEnd: number | undefined;
      const current = () => operation ?? { span: server, context: serverContext };
      const traced: RequestTrace = {
        traceId: server.spanContext().traceId,
        upstream: upstreamTrace(current),
        startOperation(type, name) {
          const attributes: Attributes = { 'graphql.operation.type': type };
          if (name) attributes['graphql.operation.name'] = name;
          const span = tracer.startSpan(
            name ? `${type} ${name}` : type,
            { kind: SpanKind.INTERNAL, attributes },
            serverContext,
          );
          operation = { span, context: trace.setSpan(serverContext, span) };
        },
        operationDone() {
          operationEnd ??= performance.now();
        },
        end(end: RequestEnd) {
          if (operation) {
            if (end.credits) operation.span.setAttributes(figureAttributes(end.credits));
            markErrors(operation.span, end.codes);
            operation.span.end(operationEnd);
          } else {
            markErrors(server, end.codes);
          }
          server.setAttribute('http.response.status_code', end.status);
          if (end.requestId) server.setAttribute(GATEWAY_ATTRIBUTES.requestId, end.requestId);
          if (end.status >= 500) {
            server.setAttribute('error.type', String(end.status));
            server.setStatus({ code: SpanStatusCode.ERROR });
          }
          server.end();
        },
      };
      return traced;
    },
    shutdown: options.shutdown,
  };
}

/**
 * An operation's credits as its span's attributes, read as its log line reads them
 * (`creditLogFields`): `creditsUsed` as `gateway.credits.used`, the upstream requests and retries
 * as `gateway.upstream.requests` and `.retries`; nothing for a figure that is null.
 */
function figureAttributes(credits: CreditExtensions): Attributes {
  const attributes: Attributes = {};
  for (const [name, value] of Object.entries(creditLogFields(credits))) {
    if (value === null) continue;
    const credit = /^credits([A-Z].*)$/.exec(name);
    if (credit) attributes[`gateway.credits.${credit[1]!.toLowerCase()}`] = value;
    else if (name === 'upstreamRequests') attributes[GATEWAY_ATTRIBUTES.upstreamRequests] = value;
    else if (name === 'upstreamRetries') attributes[GATEWAY_ATTRIBUTES.upstreamRetries] = value;
  }
  return attributes;
}

/**
 * The error codes of a span's request, and the ERROR status with them as its description: the
 * codes only, never the messages, which may quote what the caller sent.
 */
function markErrors(span: Span, codes: readonly string[]): void {
  if (codes.length === 0) return;
  span.setAttribute(GATEWAY_ATTRIBUTES.errorCodes, [...codes]);
  span.setStatus({ code: SpanStatusCode.ERROR, message: codes.join(', ') });
}

/** Ends an upstream request's span with its exchange: status, failure, credits charged. */
function endClientSpan(span: Span, exchange: Exchange): void {
  if (exchange.status > 0) span.setAttribute('http.response.status_code', exchange.status);
  if (exchange.failure) {
    // An error status is its own type (`503`); anything else is its failure (`timeout`...).
    const type = exchange.failure === 'status' ? String(exchange.status) : exchange.failure;
    span.setAttribute('error.type', type);
    span.setStatus({ code: SpanStatusCode.ERROR, message: type });
    if (exchange.requestId) {
      span.setAttribute(GATEWAY_ATTRIBUTES.upstreamRequestId, exchange.requestId);
    }
  } else {
    span.setAttribute(GATEWAY_ATTRIBUTES.creditsUsed, exchange.credits);
  }
  span.end();
}
