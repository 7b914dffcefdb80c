import { describe, expect, it } from 'vitest';
import { wrap } from '../../src/upstream/operation-call.js';
import { coalesce, type Flights } from '../../src/upstream/policies/coalesce.js';
import { ledger } from '../../src/upstream/policies/ledger.js';
import type { UpstreamRequest } from '../../src/upstream/upstream-call.js';
import {
  aFewTurns,
  envelope,
  failure,
  heldAnswers,
  mockService,
  pageRequest,
  records,
} from '../helpers/mock-service.js';

const caught = (promise: Promise<unknown>) => promise.catch((error: unknown) => error);

/** Joining on the real transport, the service holding every answer; `joined` events recorded. */
function joining() {
  const service = mockService();
  const held = heldAnswers(() => envelope(records(4)));
  service.pool
    .intercept({ path: () => true })
    .reply(200, held.reply)
    .persist();
  const flights: Flights = new Map();
  const served: string[] = [];
  // Each operation composes its own call over the one table of flights, as operationCall does.
  const operation = () =>
    wrap(
      service.transport,
      ledger(),
      coalesce(flights, {
        served: (endpoint, credits, source) => served.push(`${source} ${credits}`),
      }),
    );
  return { service, held, flights, served, operation };
}

describe('coalesce', () => {
  it('joins concurrent calls for a page, across operations, to one request; the joined book it as saved', async () => {
    const { service, held, flights, served, operation } = joining();
    const asked: UpstreamRequest[] = [pageRequest(), pageRequest(), pageRequest()];
    const pages = Promise.all(asked.map((request) => operation()(request)));
    await aFewTurns();
    expect(flights.size).toBe(1);
    const [first, ...others] = await held.releaseUntil(pages);
    for (const page of others) expect(page).toBe(first);
    expect(service.sent()).toHaveLength(1);
    expect(asked.map(({ ledger }) => [ledger.requests, ledger.used, ledger.saved])).toEqual([
      [1, 4, 0],
      [0, 0, 4],
      [0, 0, 4],
    ]);
    expect(served).toEqual(['joined 4', 'joined 4']);
    expect(flights.size).toBe(0);
    await service.done();
  });

  it('joins only the same page of the same key; `fresh` joins only `fresh`', async () => {
    const { service, held, operation } = joining();
    const call = operation();
    const pages = Promise.all(
      [
        pageRequest(),
        pageRequest({ apiKey: 'other-key' }),
        pageRequest({ limit: 6 }),
        pageRequest({ fresh: true }),
        pageRequest({ fresh: true }),
      ].map(call),
    );
    await held.releaseUntil(pages);
    expect(service.sent()).toHaveLength(4);
    await service.done();
  });

  it('sends again once the request has settled (joining is not caching)', async () => {
    const { service, held, operation } = joining();
    const call = operation();
    await held.releaseUntil(call(pageRequest()));
    await held.releaseUntil(call(pageRequest()));
    expect(service.sent()).toHaveLength(2);
    await service.done();
  });

  it('a caller that aborts leaves; the request goes on for the others, and stops when all have left', async () => {
    const { service, held, flights, operation } = joining();
    const call = operation();
    const [a, b, c] = [new AbortController(), new AbortController(), new AbortController()];
    const first = caught(call(pageRequest({ signal: a.signal })));
    const second = caught(call(pageRequest({ signal: b.signal })));
    await aFewTurns();
    a.abort();
    expect(await first).toMatchObject({ failure: 'aborted' });
    expect(await held.releaseUntil(second)).toMatchObject({ envelope: envelope(records(4)) });

    const alone = caught(call(pageRequest({ filterQuery: 'search=alone', signal: c.signal })));
    await aFewTurns();
    expect(flights.size).toBe(1);
    c.abort();
    expect(await alone).toMatchObject({ failure: 'aborted' });
    // Its request was aborted, though the service never answered it: the flight is over.
    await aFewTurns();
    expect(flights.size).toBe(0);
    expect(service.sent()).toHaveLength(2);
    await service.done();
  });

  it('gives every caller the failure of the one request', async () => {
    const service = mockService();
    service.pool
      .intercept({ path: () => true })
      .reply(503, failure('SERVICE_UNAVAILABLE'))
      .delay(20);
    const call = wrap(service.transport, ledger(), coalesce(new Map()));
    const answers = await Promise.all([caught(call(pageRequest())), caught(call(pageRequest()))]);
    expect(answers[1]).toBe(answers[0]);
    expect(answers[0]).toMatchObject({ status: 503 });
    expect(service.sent()).toHaveLength(1);
    await service.done();
  });
});
