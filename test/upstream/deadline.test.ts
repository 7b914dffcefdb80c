import { setTimeout as sleep } from 'node:timers/promises';
import type { GraphQLSchema } from 'graphql';
import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { Admission } from '../../src/admission/admission.js';
import { defaultConfig } from '../../src/config.js';
import { createEstimator } from '../../src/estimate/estimate-operation.js';
import { useCredits } from '../../src/plugins/use-credits.js';
import { createUpstream } from '../../src/upstream/create-upstream.js';
import { OperationDeadline } from '../../src/upstream/operation-deadline.js';
import { wrap } from '../../src/upstream/operation-call.js';
import { concurrency } from '../../src/upstream/policies/concurrency.js';
import { deadline } from '../../src/upstream/policies/deadline.js';
import { ledger } from '../../src/upstream/policies/ledger.js';
import { retry } from '../../src/upstream/policies/retry.js';
import { RETRY_BUDGET, RetryBudget } from '../../src/upstream/retry-budget.js';
import { Semaphore } from '../../src/upstream/semaphore.js';
import { UpstreamSession } from '../../src/upstream/upstream-session.js';
import {
  envelope,
  failure,
  heldAnswers,
  mockService,
  pageRequest,
  SERVICE,
} from '../helpers/mock-service.js';

const caught = (promise: Promise<unknown>) => promise.catch((error: unknown) => error);

describe('deadline (OPERATION_TIMEOUT_MS, and the client going away)', () => {
  it('fails the calls in flight and those waiting OPERATION_TIMEOUT, and sends nothing more', async () => {
    const service = mockService();
    service.pool
      .intercept({ path: () => true })
      .reply(200, heldAnswers().reply)
      .persist();
    const clock = new OperationDeadline(100, undefined);
    const call = wrap(service.transport, ledger(), concurrency(new Semaphore(1)), deadline(clock));
    const ask = (search: string) => caught(call(pageRequest({ filterQuery: `search=${search}` })));
    const calls = [ask('first'), ask('waiting')];
    const timeout = {
      code: 'OPERATION_TIMEOUT',
      failure: 'deadline',
      message: expect.stringContaining('longer than its 100 ms (OPERATION_TIMEOUT_MS)'),
    };
    expect(await Promise.all(calls)).toEqual([
      expect.objectContaining(timeout),
      expect.objectContaining(timeout),
    ]);
    expect(await ask('later')).toMatchObject(timeout);
    expect(service.sent()).toEqual(['/v1/companies?search=first&limit=5']);
    await service.done();
  });

  it('starts with the first request, not before', async () => {
    const service = mockService();
    service.pool.intercept({ path: () => true }).reply(200, envelope([]));
    const clock = new OperationDeadline(100, undefined);
    const call = wrap(service.transport, ledger(), deadline(clock));
    await sleep(150);
    const before = Date.now();
    await call(pageRequest());
    expect(clock.at).toBeGreaterThanOrEqual(before + 100);
    expect(service.sent()).toHaveLength(1);
    await service.done();
  });

  it('once stopped, no longer fires', async () => {
    const service = mockService();
    service.pool
      .intercept({ path: () => true })
      .reply(200, envelope([]))
      .times(2);
    const clock = new OperationDeadline(100, undefined);
    const call = wrap(service.transport, ledger(), deadline(clock));
    await call(pageRequest({ filterQuery: 'search=before' }));
    clock.stop();
    await sleep(150);
    await call(pageRequest({ filterQuery: 'search=after' }));
    expect(service.sent()).toHaveLength(2);
    await service.done();
  });

  it('aborts the calls of a client that went away: UPSTREAM_UNAVAILABLE, failure aborted', async () => {
    const service = mockService();
    service.pool.intercept({ path: () => true }).reply(200, heldAnswers().reply);
    const client = new AbortController();
    const call = wrap(
      service.transport,
      ledger(),
      deadline(new OperationDeadline(10_000, client.signal)),
    );
    const pending = caught(call(pageRequest()));
    await sleep(20);
    client.abort();
    expect(await pending).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', failure: 'aborted' });
    expect(service.sent()).toHaveLength(1);
    await service.done();
  });

  it('lets no wait outlast it: a 429 whose Retry-After ends after it is answered at once', async () => {
    const service = mockService();
    service.pool
      .intercept({ path: () => true })
      .reply(429, failure('TOO_MANY_REQUESTS'), { headers: { 'retry-after': '1' } });
    const call = wrap(
      service.transport,
      ledger(),
      retry({ retries: 2, retryAfterMaxMs: 2_000, budget: new RetryBudget(RETRY_BUDGET) }),
      deadline(new OperationDeadline(500, undefined)),
    );
    const started = Date.now();
    await expect(call(pageRequest())).rejects.toMatchObject({
      code: 'TOO_MANY_REQUESTS',
      retryAfter: 1,
    });
    expect(Date.now() - started).toBeLessThan(500);
    expect(service.sent()).toHaveLength(1);
    await service.done();
  });
});

describe('useCredits: the session ends with its operation', () => {
  /** A one-field graph whose field reads a page through the operation's session. */
  async function runOperation(withCredits: boolean) {
    const service = mockService();
    service.pool
      .intercept({ path: () => true })
      .reply(200, envelope([]))
      .times(2);
    const upstream = createUpstream({
      baseUrl: SERVICE,
      timeoutMs: 5_000,
      dispatcher: service.agent,
    });
    const session = new UpstreamSession(upstream.shared, {
      apiKey: 'key',
      concurrency: 2,
      deadlineMs: 100,
    });
    const schema = createSchema({
      typeDefs: 'type Query { records: Int }',
      resolvers: {
        Query: {
          records: async (_: unknown, __: unknown, context: { upstream: UpstreamSession }) =>
            (await context.upstream.page('companies', '', { limit: 5 })).data.length,
        },
      },
    });
    const admission = new Admission({
      config: defaultConfig,
      authenticate: () => ({ principal: 'key', upstreamKey: 'key', validUntil: Infinity }),
      schema,
    });
    const estimate = createEstimator(schema, {
      defaultPageSize: 20,
      maxPageSize: 500,
      secret: 's',
    });
    const yoga = createYoga({
      schema: schema as GraphQLSchema,
      context: { upstream: session, admission, quotaHold: null },
      plugins: withCredits ? [useCredits(estimate)] : [],
    });
    const response = await yoga.fetch('http://gateway.test/graphql?query={records}');
    expect(await response.json()).toMatchObject({ data: { records: 0 } });
    // After the operation, past its deadline: the session's timer must not have fired.
    await sleep(150);
    const after = await caught(session.page('companies', 'search=after', { limit: 5 }));
    return { after, service };
  }

  it('stops the deadline once execution is done', async () => {
    const { after, service } = await runOperation(true);
    expect(after).toMatchObject({ data: [] });
    expect(service.sent()).toHaveLength(2);
    await service.done();
  });

  it('(without it, the deadline fires after the operation)', async () => {
    const { after, service } = await runOperation(false);
    expect(after).toMatchObject({ code: 'OPERATION_TIMEOUT' });
    expect(service.sent()).toHaveLength(1);
    await service.agent.close();
  });
});
