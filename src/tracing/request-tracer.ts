import type { CreditExtensions } from '../credits/credit-extensions.js';
import type { UpstreamTrace } from '../upstream/upstream-trace.js';

/** How a traced request ended. */
export interface RequestEnd {
  /** The response's HTTP status. */
  status: number;
  /** Its `X-Request-Id`, which the log line names too. */
  requestId: string | null;
  /** The distinct `extensions.code` values of its errors. */
  codes: readonly string[];
  /** Its operation's credits, as its `extensions` said, when one ran. */
  credits?: CreditExtensions;
}

/**
 * The traces of one GraphQL request: a server span (continuing the caller's `traceparent`), its
 * operation's span under it, and a client span per upstream request under that.
 */
export interface RequestTrace {
  /** The trace it belongs to, 32 hex digits: the caller's, when it sent a `traceparent`. */
  readonly traceId: string;
  /** The operation's upstream requests: their spans go under the operation's span. */
  readonly upstream: UpstreamTrace;
  /** Starts the operation's span: its type (`query`, `mutation`...) and name, if it has one. */
  startOperation(type: string, name: string | null): void;
  /** The operation's execution is done: its span ends there (with its figures, at {@link end}). */
  operationDone(): void;
  /** Ends the spans, the operation's with its figures and the request's with its status. */
  end(end: RequestEnd): void;
}

/** Traces GraphQL requests (the OpenTelemetry SDK, `otel-request-tracer.ts`). */
export interface RequestTracer {
  /** Starts the traces of a request to the GraphQL endpoint at `route` (`/graphql`). */
  start(request: Request, route: string): RequestTrace;
  /** Sends the spans not yet exported, within a few seconds, then stops. */
  shutdown(): Promise<void>;
}
