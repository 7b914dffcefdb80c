import { describe, expect, it } from 'vitest';
import { createUpstream } from '../../src/upstream/create-upstream.js';
import { wrap } from '../../src/upstream/operation-call.js';
import { ledger } from '../../src/upstream/policies/ledger.js';
import { retry } from '../../src/upstream/policies/retry.js';
import { trace } from '../../src/upstream/policies/trace.js';
import { RETRY_BUDGET, RetryBudget } from '../../src/upstream/retry-budget.js';
import type { Exchange } from '../../src/upstream/upstream-observer.js';
import { UpstreamSession } from '../../src/upstream/upstream-session.js';
import type { SentRequest, UpstreamTrace } from '../../src/upstream/upstream-trace.js';
import {
  envelope,
  failure,
  mockService,
  pageRequest,
  records,
  SERVICE,
} from '../helpers/mock-service.js';

/** An operation's trace that records its spans (with a `traceparent` each) and pages served. */
function recordingTrace(operation: string) {
  const spans: { request: SentRequest; traceparent: string; exchange?: Exchange }[] = [];
  const served: string[] = [];
  const upstreamTrace: UpstreamTrace = {
    send(request) {
      const spanId = `${operation}${spans.length}`.padStart(16, '0');
      const span: (typeof spans)[number] = {
        request,
        traceparent: `00-0af7651916cd43dd8448eb211c80319c-${spanId}-01`,
      };
      spans.push(span);
      return { headers: { traceparent: span.traceparent }, end: (e) => (span.exchange = e) };
    },
    served: (endpoint, credits, source) => served.push(`${source} ${endpoint} ${credits}`),
  };
  return { spans, served, trace: upstreamTrace };
}

/** The `traceparent` header of each request that reached the mock service, in order. */
function traceparentsSent(service: ReturnType<typeof mockService>) {
  return (service.agent.getCallHistory()?.calls() ?? []).map(
    (call) => (call.headers as Record<string, string> | undefined)?.['traceparent'] ?? null,
  );
}

describe('trace', () => {
  it('a span per attempt, each sent upstream as the traceparent of its request', async () => {
    const service = mockService();
    service.pool.intercept({ path: () => true }).reply(503, failure('SERVICE_UNAVAILABLE'));
    service.pool.intercept({ path: () => true }).reply(200, envelope(records(4)));
    const recorded = recordingTrace('a');
    const call = wrap(
      service.transport,
      trace(recorded.trace),
      ledger(),
      retry({
        retries: 2,
        retryAfterMaxMs: 0,
        random: () => 0,
        budget: new RetryBudget(RETRY_BUDGET),
      }),
    );
    await call(pageRequest());
    expect(recorded.spans.map(({ request, exchange }) => [request, exchange?.status])).toEqual([
      [{ endpoint: 'companies', limit: 5, resendCount: 0 }, 503],
      [{ endpoint: 'companies', limit: 5, resendCount: 1 }, 200],
    ]);
    expect(recorded.spans[1]?.exchange).toMatchObject({ credits: 4 });
    expect(traceparentsSent(service)).toEqual(recorded.spans.map((span) => span.traceparent));
    await service.done();
  });

  it('in the pipeline: a cache hit and a joined request are told to the operation, with no span; untraced, no header', async () => {
    const service = mockService();
    service.pool
      .intercept({ path: () => true })
      .reply(200, envelope(records(3)))
      .times(2);
    const upstream = createUpstream({
      baseUrl: SERVICE,
      timeoutMs: 5_000,
      dispatcher: service.agent,
      cache: { ttlMs: 60_000, maxBytes: 1_000_000 },
    });
    const session = (recorded?: ReturnType<typeof recordingTrace>) =>
      new UpstreamSession(upstream.shared, {
        apiKey: 'key',
        concurrency: 4,
        trace: recorded?.trace,
      });
    const first = recordingTrace('a');
    const joiner = recordingTrace('b');
    const [a, b] = [session(first), session(joiner)];
    await Promise.all([
      a.page('companies', '', { limit: 3 }),
      b.page('companies', '', { limit: 3 }),
    ]);
    const cached = recordingTrace('c');
    await session(cached).page('companies', '', { limit: 3 });
    expect(first.spans.map((span) => span.exchange?.status)).toEqual([200]);
    expect(first.served).toEqual([]);
    expect(joiner.spans).toEqual([]);
    expect(joiner.served).toEqual(['joined companies 3']);
    expect(cached.spans).toEqual([]);
    expect(cached.served).toEqual(['cache companies 3']);

    await session().page('companies', 'search=untraced', { limit: 3 });
    expect(traceparentsSent(service)).toEqual([first.spans[0]?.traceparent, null]);
    await service.done();
    await upstream.close();
  });
});
