import { describe, expect, it } from 'vitest';
import { CircuitBreaker, type BreakerState } from '../../src/upstream/circuit-breaker.js';
import { wrap } from '../../src/upstream/operation-call.js';
import { breaker } from '../../src/upstream/policies/breaker.js';
import { ledger } from '../../src/upstream/policies/ledger.js';
import {
  envelope,
  failure,
  heldAnswers,
  mockService,
  pageRequest,
} from '../helpers/mock-service.js';

const caught = (promise: Promise<unknown>) => promise.catch((error: unknown) => error);

/** The breaker on the real transport, with a clock the test moves and its events recorded. */
function broken(failureThreshold: number) {
  const service = mockService();
  let now = 1_000_000;
  const events: BreakerState[] = [];
  const circuit = new CircuitBreaker(
    { failureThreshold, openMs: 5_000, now: () => now },
    { breaker: (state) => events.push(state) },
  );
  const call = wrap(service.transport, ledger(), breaker(circuit));
  const ask = (signal?: AbortSignal) => caught(call(pageRequest({ signal })));
  const answer = (status: number, times = 1) =>
    service.pool
      .intercept({ path: () => true })
      .reply(status, status === 200 ? envelope([]) : failure('X'))
      .times(times);
  return { service, circuit, events, ask, answer, wait: (ms: number) => (now += ms) };
}

describe('breaker', () => {
  it('opens after `failureThreshold` failures in a row, then refuses at once, sending nothing', async () => {
    const { service, circuit, events, ask, answer, wait } = broken(3);
    answer(503, 3);
    for (let i = 0; i < 3; i++) expect(await ask()).toMatchObject({ status: 503 });
    expect(circuit.state).toBe('open');
    wait(1_500);
    expect(await ask()).toMatchObject({
      code: 'UPSTREAM_UNAVAILABLE',
      failure: 'open-circuit',
      retryAfter: 4,
    });
    expect(service.sent()).toHaveLength(3);
    expect(events).toEqual(['open']);
    await service.done();
  });

  it("counts the service's failures only: the caller's answers and a success end the run", async () => {
    const { service, circuit, ask, answer } = broken(2);
    for (const status of [503, 400, 502, 401, 500, 402, 504, 403, 503, 429, 500, 200, 503]) {
      answer(status);
      await ask();
    }
    expect(circuit.state).toBe('closed');
    expect(service.sent()).toHaveLength(13);
    await service.done();
  });

  it('counts a malformed body as a failure, and a call its client aborted as nothing', async () => {
    const { service, circuit, ask, answer } = broken(2);
    service.pool.intercept({ path: () => true }).reply(200, { not: 'an envelope' });
    service.pool.intercept({ path: () => true }).reply(200, heldAnswers().reply);
    expect(await ask()).toMatchObject({ failure: 'malformed' });
    const client = new AbortController();
    const aborted = ask(client.signal);
    await new Promise((resolve) => setTimeout(resolve, 20));
    client.abort();
    expect(await aborted).toMatchObject({ failure: 'aborted' });
    expect(circuit.state).toBe('closed');
    answer(503);
    await ask();
    expect(circuit.state).toBe('open');
    expect(service.sent()).toHaveLength(3);
    await service.done();
  });

  it('half-open after `openMs`: one probe goes, the others are refused; its success closes it', async () => {
    const { service, events, ask, answer, wait } = broken(1);
    answer(503);
    await ask();
    wait(5_000);
    const held = heldAnswers();
    service.pool.intercept({ path: () => true }).reply(200, held.reply);
    const probe = ask();
    expect(await ask()).toMatchObject({ failure: 'open-circuit' });
    await held.releaseUntil(probe);
    expect(await probe).toMatchObject({ envelope: expect.anything() });
    answer(200);
    await ask();
    expect(service.sent()).toHaveLength(3);
    expect(events).toEqual(['open', 'half-open', 'closed']);
    await service.done();
  });

  it('a failed probe opens it again for another `openMs`', async () => {
    const { service, circuit, events, ask, answer, wait } = broken(5);
    answer(503, 6);
    for (let i = 0; i < 5; i++) await ask();
    wait(5_000);
    expect(await ask()).toMatchObject({ status: 503 });
    expect(circuit.state).toBe('open');
    wait(4_999);
    expect(await ask()).toMatchObject({ failure: 'open-circuit', retryAfter: 1 });
    expect(service.sent()).toHaveLength(6);
    expect(events).toEqual(['open', 'half-open', 'open']);
    await service.done();
  });
});
