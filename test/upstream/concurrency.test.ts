import { describe, expect, it } from 'vitest';
import { wrap } from '../../src/upstream/operation-call.js';
import { concurrency } from '../../src/upstream/policies/concurrency.js';
import { ledger } from '../../src/upstream/policies/ledger.js';
import { Semaphore } from '../../src/upstream/semaphore.js';
import { aFewTurns, heldAnswers, mockService, pageRequest } from '../helpers/mock-service.js';

/** The policy with `slots` slots on the real transport; the service holds every answer. */
function capped(slots: number) {
  const service = mockService();
  const held = heldAnswers();
  service.pool
    .intercept({ path: () => true })
    .reply(200, held.reply)
    .persist();
  const call = wrap(service.transport, ledger(), concurrency(new Semaphore(slots)));
  const ask = (search: string, signal?: AbortSignal) =>
    call(pageRequest({ filterQuery: `search=${search}`, signal }));
  return { service, held, ask };
}

describe('concurrency (UPSTREAM_CONCURRENCY)', () => {
  it('keeps at most `slots` requests in flight; the others wait their turn', async () => {
    const { service, held, ask } = capped(3);
    const pages = Promise.all(Array.from({ length: 10 }, (_, i) => ask(String(i))));
    await aFewTurns();
    expect(service.sent()).toHaveLength(3);
    await held.releaseUntil(pages);
    expect(service.sent()).toHaveLength(10);
    expect(held.maxInFlight()).toBe(3);
    await service.done();
  });

  it('keeps the cap when a caller arrives while another request finishes', async () => {
    // A new caller may arrive at any microtask after a slot is released: at each delay, the
    // released slot must go to the caller already waiting, not to the newcomer as well.
    for (let hops = 0; hops < 12; hops++) {
      const { service, held, ask } = capped(2);
      const pages = [0, 1, 2].map((i) => ask(String(i)));
      await aFewTurns();
      expect(service.sent()).toHaveLength(2);
      held.releaseOne();
      let arrival: Promise<void> = Promise.resolve();
      for (let i = 0; i < hops; i++) arrival = arrival.then(() => undefined);
      const late = arrival.then(() => ask('late'));
      await aFewTurns();
      expect(held.maxInFlight(), `a caller arriving ${hops} microtasks later`).toBe(2);
      await held.releaseUntil(Promise.all([...pages, late]));
      expect(service.sent()).toHaveLength(4);
      await service.done();
    }
  });

  it('does not send a call whose signal aborted while it waited, and frees its slot', async () => {
    const { service, held, ask } = capped(1);
    const first = ask('first');
    const client = new AbortController();
    const second = ask('second', client.signal).catch((error: unknown) => error);
    await aFewTurns();
    client.abort();
    await held.releaseUntil(first);
    expect(await second).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', failure: 'aborted' });
    await held.releaseUntil(ask('third'));
    expect(service.sent()).toEqual([
      '/v1/companies?search=first&limit=5',
      '/v1/companies?search=third&limit=5',
    ]);
    await service.done();
  });
});
