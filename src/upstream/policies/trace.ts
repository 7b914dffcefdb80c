import { requestWith, type UpstreamPolicy, type UpstreamRequest } from '../upstream-call.js';
import type { UpstreamTrace } from '../upstream-trace.js';
import { answered, failed } from './observe.js';

/**
 * A client span for each request actually sent, whose W3C trace context goes upstream with it
 * (`traceHeaders`, sent by the transport as `traceparent`). It wraps the transport, inside the
 * breaker and the retries, so that each attempt of a retried call is a span of its own (counting
 * the attempts before it), and nothing served without a request makes one. Composed only when
 * traces are on: without them no call pays for it.
 */
export function trace(operation: UpstreamTrace): UpstreamPolicy {
  // The retries send the same request object again: its earlier attempts, counted.
  const attempts = new WeakMap<UpstreamRequest, number>();
  return (next) => async (request) => {
    const resendCount = attempts.get(request) ?? 0;
    attempts.set(request, resendCount + 1);
    const { endpoint } = request;
    const span = operation.send({ endpoint, limit: request.limit, resendCount });
    const started = performance.now();
    try {
      const page = await next(requestWith(request, { traceHeaders: span.headers }));
      span.end(answered(endpoint, page, (performance.now() - started) / 1000));
      return page;
    } catch (error) {
      span.end(failed(endpoint, error, (performance.now() - started) / 1000));
      throw error;
    }
  };
}
