import { getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { bookingOf, type DoorContext } from '../admission/door-context.js';
import { codesOf } from '../admission/operation-report.js';
import type { RequestTracer } from '../tracing/request-tracer.js';

/**
 * Traces each GraphQL request (`OTEL_TRACES_EXPORTER=otlp`; absent otherwise): a server span from
 * its arrival to its response, continuing the caller's `traceparent`, and under it the
 * operation's span from the start of its execution to its end, with its type and name, its
 * credits (`extensions.credits`), upstream requests and error codes. The trace travels in the
 * request's booking (its upstream requests' spans come from there). An answer in parts ends its
 * server span once it ends. Health checks, metrics and
 * anything off the endpoint are not traced.
 */
export function useTracing(tracer: RequestTracer, endpoint: string): Plugin {
  return {
    onRequest({ request, url, serverContext }) {
      if (url.pathname !== endpoint) return;
      bookingOf(serverContext as DoorContext, request, endpoint).trace = tracer.start(
        request,
        endpoint,
      );
    },
    onExecute({ args }) {
      const trace = (args.contextValue as DoorContext).booking?.trace;
      if (!trace) return;
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
    onResponse({ response, serverContext }) {
      const booking = (serverContext as DoorContext).booking;
      const trace = booking?.trace;
      if (!booking || !trace) return;
      const { status } = response;
      const end = () =>
        trace.end({
          status,
          requestId: booking.requestId,
          codes: codesOf(booking.result?.errors),
          credits: booking.credits,
        });
      if (booking.parts) booking.parts.ended(end);
      else end();
    },
  };
}
