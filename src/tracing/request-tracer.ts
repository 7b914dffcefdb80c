import type { UpstreamTrace } from '../upstream/upstream-trace.js';

/** What an operation came to, as its span ends with it (the figures of `extensions.credits`). */
export interface OperationFigures {
  creditsUsed: number;
  creditsSaved: number;
  /** Credits timed-out attempts may have been charged. */
  creditsUncertain: number;
  /** The estimate made before it ran; null when it never got that far. */
  creditsEstimate: number | null;
  /** The credits it was allowed; null when it never got that far. */
  creditsBudget: number | null;
  upstreamRequests: number;
  upstreamRetries: number;
}

/** How a traced request ended. */
export interface RequestEnd {
  /** The response's HTTP status. */
  status: number;
  /** Its `X-Request-Id`, which the log line names too. */
  requestId: string | null;
  /** The distinct `extensions.code` values of its errors. */
  codes: readonly string[];
  /** Its operation's figures, when one ran. */
  figures?: OperationFigures;
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
