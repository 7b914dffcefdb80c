import { getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Context } from '../context.js';
import type { RequestTrace, RequestTracer } from '../tracing/request-tracer.js';
import type { UpstreamSession } from '../upstream/upstream-session.js';
import { codesOf } from './use-operation-report.js';

/** Options of {@link useTracing}. */
export interface TracingOptions {
  tracer: RequestTracer;
  /** The GraphQL endpoint's path (`/graphql`): only requests to it are traced. */
  endpoint: string;
  /** Each request's trace, kept here for the context (its upstream requests) and the log line. */
  traces: WeakMap<Request, RequestTrace>;
}

interface TracedRequest {
  session?: UpstreamSession;
  codes: readonly string[];
}

/**
 * Traces each GraphQL request (`OTEL_TRACES_EXPORTER=otlp`; absent otherwise): a server span from
 * its arrival to its response, continuing the caller's `traceparent`, and under it the
 * operation's span from the start of its execution to its end, with its type and name, its
 * credits (used, saved, estimate, budget), upstream requests and error codes. Health checks,
 * metrics and anything off the endpoint are not traced.
 */
export function useTracing({ tracer, endpoint, traces }: TracingOptions): Plugin {
  const traced = new WeakMap<Request, TracedRequest>();
  return {
    onRequest({ request, url }) {
      if (url.pathname !== endpoint) return;
      traces.set(request, tracer.start(request, endpoint));
      traced.set(request, { codes: [] });
    },
    onExecute({ args }) {
      const context = args.contextValue as Partial<Context> & { request?: Request };
      const trace = context.request && traces.get(context.request);
      const state = context.request && traced.get(context.request);
      if (!trace || !state) return;
      state.session = context.upstream;
      const operation = getOperationAST(args.document, args.operationName);
      trace.startOperation(operation?.operation ?? 'query', operation?.name?.value ?? null);
      return {
        onExecuteDone({ result }) {
          if (Symbol.asyncIterator in result) return { onEnd: () => trace.operationDone() };
          trace.operationDone();
          return undefined;
        },
      };
    },
    onResultProcess({ request, result }) {
      const state = traced.get(request);
      if (state && !Array.isArray(result) && !(Symbol.asyncIterator in result)) {
        state.codes = codesOf(result);
      }
    },
    onResponse({ request, response }) {
      const trace = traces.get(request);
      const state = traced.get(request);
      if (!trace || !state) return;
      const session = state.session;
      trace.end({
        status: response.status,
        requestId: response.headers.get('x-request-id'),
        codes: state.codes,
        figures: session && {
          creditsUsed: session.ledger.used,
          creditsSaved: session.ledger.saved,
          creditsUncertain: session.ledger.uncertain,
          creditsEstimate: session.budget.estimate,
          creditsBudget: session.budget.budget,
          upstreamRequests: session.ledger.requests,
          upstreamRetries: session.ledger.retries,
        },
      });
    },
  };
}
