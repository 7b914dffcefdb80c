import type { EndpointName } from './endpoints.js';
import type { Exchange, UpstreamObserver } from './upstream-observer.js';

/** The W3C Trace Context headers a request carries upstream: its client span's. */
export interface TraceHeaders {
  readonly traceparent: string;
  readonly tracestate?: string;
}

/** What a client span is told of the request it stands for: never the key, filters or cursor. */
export interface SentRequest {
  readonly endpoint: EndpointName;
  /** Records asked for. */
  readonly limit: number;
  /** Attempts at the same call before this one: 0 for the first, 1 for the first retry... */
  readonly resendCount: number;
}

/** One request's client span, from before it is sent to the end of its exchange. */
export interface RequestSpan {
  /** The headers that continue the trace at the service. */
  readonly headers: TraceHeaders;
  /** Ends the span with how the exchange ended. */
  end(exchange: Exchange): void;
}

/**
 * One operation's traces as the upstream pipeline tells them, present only when traces are on
 * (`OTEL_TRACES_EXPORTER=otlp`; otherwise nothing is composed for them). `send` opens a client
 * span for each request actually sent (the `trace` policy); `served` tells of each page served
 * without one, from the cache or by joining another call's request.
 */
export interface UpstreamTrace extends Required<Pick<UpstreamObserver, 'served'>> {
  send(request: SentRequest): RequestSpan;
}
