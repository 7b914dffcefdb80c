import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  startSandbox,
  type Acquisition,
  type ExecMove,
  type FundingEvent,
  type Sandbox,
} from '../../src/sandbox/index.js';
import {
  byDiscovery,
  get,
  ids,
  SMALL_SIZES,
  walk,
  type ErrorBody,
  type Query,
  type SuccessBody,
} from './sandbox-client.js';

let sandbox: Sandbox;

beforeAll(async () => {
  sandbox = await startSandbox({
    port: 0,
    quiet: true,
    sizes: SMALL_SIZES,
    seed: 5,
    controlsOverHttp: true,
  });
});
afterAll(async () => {
  await sandbox?.close();
});
beforeEach(() => {
  sandbox.reset();
});

/** POSTs new events to the control route; `body` is sent as is when it is a string. */
async function addOverHttp<B = { success: true; data: Record<string, any>[] }>(
  body: unknown,
  target: Sandbox = sandbox,
): Promise<{ status: number; body: B }> {
  const res = await fetch(`${target.url}/__sandbox/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as B };
}

const PATHS = {
  fundingEvent: '/v1/funding-events',
  execMove: '/v1/exec-moves',
  acquisition: '/v1/acquisitions',
} as const;

const LISTS = {
  fundingEvent: 'fundingEvents',
  execMove: 'execMoves',
  acquisition: 'acquisitions',
} as const;

const ms = (iso: string, delta = 0): string => new Date(Date.parse(iso) + delta).toISOString();

describe('POST /__sandbox/events and addEvents', () => {
  it('adds events that come first in their list, served exactly as the route answered them', async () => {
    for (const kind of ['fundingEvent', 'execMove', 'acquisition'] as const) {
      const before = sandbox.data;
      const added = await addOverHttp({ kind, count: 3 });
      expect(added.status).toBe(200);
      expect(added.body.data).toHaveLength(3);
      const page = await get(sandbox, PATHS[kind], { limit: 4 });
      expect(page.body.data.slice(0, 3)).toEqual([...added.body.data].reverse());
      const times = added.body.data.map((event) => event.discoveredAt as string);
      expect(times[0]! < times[1]! && times[1]! < times[2]!).toBe(true);
      expect(Date.parse(times[0]!)).toBeGreaterThan(Date.now() - 60_000);
      expect(sandbox.data[LISTS[kind]]).toHaveLength(before[LISTS[kind]].length + 3);
    }
  });

  it('draws from the dataset: directory companies, persons and investors, consistent amounts', () => {
    const companies = new Map(sandbox.data.companies.map((c) => [c.id, c]));
    const persons = new Set(sandbox.data.persons.map((p) => p.id));
    const investors = new Set(sandbox.data.investors.map((i) => i.id));
    const funding = sandbox.addEvents({ kind: 'fundingEvent', count: 40 });
    for (const event of funding) {
      expect(companies.get(event.company.id)).toBe(event.company);
      for (const investor of event.investors) expect(investors.has(investor.id)).toBe(true);
      expect(event.amountUsd === null).toBe(event.amountUsdCents === null);
      if (event.amountUsdCents !== null) expect(event.amountUsd).toBe(event.amountUsdCents / 100);
      expect(event.sources.length).toBeGreaterThan(0);
    }
    expect(funding.some((event) => event.investors.length > 0)).toBe(true);
    for (const move of sandbox.addEvents({ kind: 'execMove', count: 40 })) {
      expect(persons.has(move.person.id)).toBe(true);
      expect(companies.get(move.company.id)).toBe(move.company);
      expect(move.fromCompany?.id).not.toBe(move.company.id);
    }
    for (const deal of sandbox.addEvents({ kind: 'acquisition', count: 40 })) {
      expect(companies.get(deal.acquirer.id)).toBe(deal.acquirer);
      expect(deal.target.id).not.toBe(deal.acquirer.id);
    }
  });

  it('makes the newest default discovery later than any, even one set in the future', () => {
    const [future] = sandbox.addEvents({
      kind: 'acquisition',
      discoveredAt: '2031-01-02T03:04:05Z',
    });
    expect(future?.discoveredAt).toBe('2031-01-02T03:04:05.000Z');
    const [next] = sandbox.addEvents({ kind: 'acquisition' });
    expect(next?.discoveredAt).toBe('2031-01-02T03:04:05.001Z');
    const [funding] = sandbox.addEvents({ kind: 'fundingEvent' });
    expect(funding!.discoveredAt < '2031').toBe(true);
  });

  it('matches each filter of its endpoint with the fields it was given, and no other value', async () => {
    const company = sandbox.data.companies[7]!;
    const other = sandbox.data.companies[8]!;
    const person = sandbox.data.persons[3]!;
    const [funding] = sandbox.addEvents({
      kind: 'fundingEvent',
      companyId: company.id.toUpperCase(),
      round: 'series_b',
      amountUsdCents: 25_000_000_000,
    });
    const [move] = sandbox.addEvents({
      kind: 'execMove',
      companyId: company.id,
      personId: person.id,
      roleSeniority: 'c_level',
      moveType: 'promotion',
      announcedAt: null,
    });
    const [deal] = sandbox.addEvents({
      kind: 'acquisition',
      acquirerId: company.id,
      targetId: other.id,
      paymentType: 'stock',
      isMerger: true,
      dealAmountUsdCents: 120_000_000_050,
    });
    expect(funding).toMatchObject({
      company: { id: company.id },
      round: 'series_b',
      amountUsdCents: 25_000_000_000,
      amountUsd: 250_000_000,
    });
    expect(move).toMatchObject({ person, company, roleSeniority: 'c_level', announcedAt: null });
    expect(deal).toMatchObject({
      acquirer: company,
      target: other,
      dealAmountUsd: 1_200_000_000.5,
    });

    const cases: [string, FundingEvent | ExecMove | Acquisition, Query, Query[]][] = [
      [
        PATHS.fundingEvent,
        funding!,
        {
          round: ['seed', 'series_b'],
          companyId: company.id,
          country: company.hqCountry.code.toLowerCase(),
          industryGroup: company.industryGroup,
          minAmountUsd: 250_000_000,
          maxAmountUsd: 250_000_000,
        },
        [
          { round: 'seed' },
          { companyId: other.id },
          { country: company.hqCountry.code === 'US' ? 'DE' : 'US' },
          { minAmountUsd: 250_000_000.01 },
          { maxAmountUsd: 249_999_999.99 },
        ],
      ],
      [
        PATHS.execMove,
        move!,
        {
          companyId: company.id,
          personId: person.id,
          roleSeniority: 'c_level',
          moveType: ['promotion', 'departure'],
          until: ms(move!.discoveredAt, 1),
        },
        [
          { roleSeniority: 'vp' },
          { moveType: 'appointment' },
          { personId: sandbox.data.persons[4]!.id },
          { until: move!.discoveredAt },
        ],
      ],
      [
        PATHS.acquisition,
        deal!,
        {
          paymentType: 'stock',
          isMerger: true,
          companyId: other.id,
          minAmountUsd: 1_200_000_000.5,
          maxAmountUsd: 1_200_000_000.5,
        },
        [
          { paymentType: 'cash' },
          { isMerger: false },
          { companyId: sandbox.data.companies[9]!.id },
          { minAmountUsd: 1_200_000_001 },
        ],
      ],
    ];
    for (const [path, event, matching, others] of cases) {
      const first = await get(sandbox, path, { ...matching, limit: 1 });
      expect(first.status, path).toBe(200);
      expect(first.body.data, `${path} ${JSON.stringify(matching)}`).toEqual([event]);
      for (const query of others) {
        const page = await get(sandbox, path, { ...query, limit: 1 });
        expect(page.status).toBe(200);
        expect(ids(page.body.data), `${path} ${JSON.stringify(query)}`).not.toContain(event.id);
      }
    }
    const asAcquirer = await get(sandbox, PATHS.acquisition, { companyId: company.id, limit: 1 });
    expect(ids(asAcquirer.body.data)).toEqual([deal!.id]);
  });

  it('since just before the first added discovery returns exactly the added events, one credit each', async () => {
    const key = 'added-events-since';
    if (sandbox.credits(key) === undefined) sandbox.addKey(key, { credits: 1000 });
    const added = (await addOverHttp({ kind: 'fundingEvent', count: 4 })).body.data;
    const since = ms(added[0]!.discoveredAt as string, -1);
    const page = await get(sandbox, PATHS.fundingEvent, { since, limit: 100 }, key);
    expect(ids(page.body.data)).toEqual(ids(added).reverse());
    expect(page.body.pagination).toEqual({ hasMore: false, nextCursor: null });
    expect(page.body.meta.creditsUsed).toBe(4);
    expect(sandbox.credits(key)).toBe(996);
    expect(sandbox.requestLog().at(-1)).toMatchObject({
      endpoint: PATHS.fundingEvent,
      status: 200,
      records: 4,
    });
    const later = await get(sandbox, PATHS.fundingEvent, { since: added[3]!.discoveredAt }, key);
    expect(later.body.data).toEqual([]);
    const exactlyAt = await get(
      sandbox,
      PATHS.fundingEvent,
      { since: added[0]!.discoveredAt },
      key,
    );
    expect(ids(exactlyAt.body.data)).toEqual(ids(added.slice(1)).reverse());
  });

  it('returns an event discovered long ago under since when it was announced after it', async () => {
    const since = new Date().toISOString();
    const [late] = sandbox.addEvents({
      kind: 'acquisition',
      discoveredAt: '2023-03-01T10:00:00Z',
      announcedAt: ms(since, 86_400_000),
    });
    const [quiet] = sandbox.addEvents({
      kind: 'execMove',
      discoveredAt: '2023-03-01T10:00:00Z',
      announcedAt: null,
    });
    const deals = await get(sandbox, PATHS.acquisition, { since });
    expect(deals.body.data).toEqual([late]);
    expect((await get(sandbox, PATHS.execMove, { since })).body.data).toEqual([]);
    // In the list it sits at its discovery, among the seeded events.
    const all = await walk(sandbox, PATHS.acquisition, {});
    const expected = byDiscovery(sandbox.data.acquisitions);
    expect(ids(all.records)).toEqual(ids(expected));
    expect(ids(all.records).indexOf(late!.id)).toBeGreaterThan(0);
    const moves = await walk(sandbox, PATHS.execMove, { until: '2023-03-01T10:00:00.001Z' });
    expect(ids(moves.records)).toContain(quiet!.id);
  });

  it('keeps a cursor issued before an insertion working: later pages go on after its position', async () => {
    const first = await get(sandbox, PATHS.fundingEvent, { limit: 5 });
    const cursor = first.body.pagination.nextCursor as string;
    const last = first.body.data[4] as { id: string; discoveredAt: string };
    const [newest] = sandbox.addEvents({ kind: 'fundingEvent' });
    const [old] = sandbox.addEvents({
      kind: 'fundingEvent',
      discoveredAt: ms(last.discoveredAt, -1),
    });
    const rest: Record<string, unknown>[] = [];
    let next: string | null = cursor;
    while (next) {
      const page: { body: SuccessBody } = await get(sandbox, PATHS.fundingEvent, {
        limit: 100,
        cursor: next,
      });
      rest.push(...page.body.data);
      next = page.body.pagination.nextCursor;
    }
    const order = byDiscovery(sandbox.data.fundingEvents);
    expect(ids(rest)).toEqual(ids(order.slice(order.findIndex((e) => e.id === last.id) + 1)));
    expect(ids(rest)).toContain(old!.id);
    expect(ids(rest)).not.toContain(newest!.id);
    const seen = [...ids(first.body.data), ...ids(rest)];
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toHaveLength(sandbox.data.fundingEvents.length - 1);
  });

  it('pages a filtered list with added events in it exactly once each, in order', async () => {
    const company = sandbox.data.companies[11]!;
    sandbox.addEvents([
      { kind: 'fundingEvent', round: 'series_a', count: 7 },
      { kind: 'fundingEvent', round: 'series_a', discoveredAt: '2024-05-05T00:00:00Z', count: 3 },
      { kind: 'fundingEvent', round: 'seed', discoveredAt: '2023-01-01', count: 2 },
      { kind: 'fundingEvent', companyId: company.id, discoveredAt: '2023-06-01', count: 2 },
      { kind: 'fundingEvent', companyId: company.id, count: 2 },
    ]);
    const events = sandbox.data.fundingEvents;
    const cases: [Query, (e: FundingEvent) => boolean][] = [
      [{ round: 'series_a' }, (e) => e.round === 'series_a'],
      [{ round: ['series_a', 'seed'] }, (e) => e.round === 'series_a' || e.round === 'seed'],
      [{ companyId: company.id }, (e) => e.company.id === company.id],
      [
        { country: company.hqCountry.code },
        (e) => e.company.hqCountry.code === company.hqCountry.code,
      ],
    ];
    for (const [query, test] of cases) {
      const result = await walk(sandbox, PATHS.fundingEvent, query, undefined, [7, 13]);
      expect(ids(result.records), JSON.stringify(query)).toEqual(
        ids(byDiscovery(events.filter(test))),
      );
    }
  });

  it('reset takes the added events out again', async () => {
    const seeded = sandbox.data;
    const before = await get(sandbox, PATHS.execMove, { limit: 5, roleSeniority: 'vp' });
    sandbox.addEvents({ kind: 'execMove', roleSeniority: 'vp', count: 3 });
    expect(sandbox.data).not.toBe(seeded);
    expect((await fetch(`${sandbox.url}/__sandbox/reset`, { method: 'POST' })).status).toBe(200);
    expect(sandbox.data).toBe(seeded);
    const after = await get(sandbox, PATHS.execMove, { limit: 5, roleSeniority: 'vp' });
    expect(after.body.data).toEqual(before.body.data);
  });

  it.each([
    ['{}', {}, /^kind must be fundingEvent, execMove, acquisition/],
    ['an unknown kind', { kind: 'merger' }, /^kind must be/],
    ['a field of another kind', { kind: 'execMove', round: 'seed' }, /^round is not a field/],
    ['an unknown field', { kind: 'fundingEvent', colour: 'red' }, /^colour is not a field/],
    ['a number for a string', { kind: 'fundingEvent', round: 5 }, /^round must be a non-empty/],
    ['a bad timestamp', { kind: 'acquisition', discoveredAt: 'yesterday' }, /^discoveredAt must/],
    [
      'a null announcement but for a move',
      { kind: 'fundingEvent', announcedAt: null },
      /^announcedAt must/,
    ],
    [
      'an id that is not a UUID',
      { kind: 'fundingEvent', companyId: 'acme' },
      /^companyId must be a UUID/,
    ],
    [
      'an unknown company',
      { kind: 'fundingEvent', companyId: '00000000-0000-4000-8000-000000000000' },
      /^companyId: no company has the id/,
    ],
    [
      'an unknown person',
      { kind: 'execMove', personId: '00000000-0000-4000-8000-000000000000' },
      /^personId: no person/,
    ],
    ['negative cents', { kind: 'fundingEvent', amountUsdCents: -1 }, /^amountUsdCents must/],
    [
      'fractional cents',
      { kind: 'acquisition', dealAmountUsdCents: 1.5 },
      /^dealAmountUsdCents must/,
    ],
    [
      'a string for a flag',
      { kind: 'acquisition', isMerger: 'yes' },
      /^isMerger must be true or false/,
    ],
    ['count 0', { kind: 'execMove', count: 0 }, /^count must be an integer from 1 to 1000/],
    [
      'too many in all',
      [
        { kind: 'execMove', count: 600 },
        { kind: 'acquisition', count: 600 },
      ],
      /^count must add up/,
    ],
    [
      'a bad entry in a list',
      [{ kind: 'execMove' }, { kind: 'acquisition', paymentType: 3 }],
      /^\[1\]\.paymentType must/,
    ],
    ['not JSON', 'kind=fundingEvent', /^the body must be JSON/],
    ['an empty body', '', /^the body must be JSON/],
    ['a string', '"fundingEvent"', /^the body must be an object/],
  ])(
    'answers 400 INVALID_INPUT naming the field for %s, and adds nothing',
    async (_name, body, message) => {
      const before = sandbox.data;
      const reply = await addOverHttp<ErrorBody>(body);
      expect(reply.status).toBe(400);
      expect(reply.body.error.code).toBe('INVALID_INPUT');
      expect(reply.body.error.message).toMatch(message);
      expect(sandbox.data).toBe(before);
    },
  );

  it('refuses an acquisition of a company by itself, and two names for the acquirer', async () => {
    const id = sandbox.data.companies[0]!.id;
    expect(
      (await addOverHttp<ErrorBody>({ kind: 'acquisition', companyId: id, targetId: id })).body
        .error.message,
    ).toMatch(/^targetId must differ from the acquirer/);
    expect(() => sandbox.addEvents({ kind: 'acquisition', companyId: id, acquirerId: id })).toThrow(
      /companyId and acquirerId both name the acquirer/,
    );
    const [deal] = sandbox.addEvents({ kind: 'acquisition', targetId: id });
    expect(deal!.target.id).toBe(id);
    expect(deal!.acquirer.id).not.toBe(id);
  });

  it('is a control: no key needed, 404 when the controls are off', async () => {
    const closed = await startSandbox({ port: 0, quiet: true, sizes: SMALL_SIZES });
    try {
      const reply = await addOverHttp<ErrorBody>({ kind: 'fundingEvent' }, closed);
      expect(reply.status).toBe(404);
      expect(closed.data.fundingEvents).toHaveLength(SMALL_SIZES.fundingEvents);
      expect(closed.addEvents({ kind: 'fundingEvent' })).toHaveLength(1);
    } finally {
      await closed.close();
    }
    expect(sandbox.requestLog()).toEqual([]);
    expect((await addOverHttp({ kind: 'execMove' })).status).toBe(200);
    expect(sandbox.requestLog()).toEqual([]);
  });
});

describe('trickle', () => {
  it('adds one event of a random kind per interval, each the newest of its list, until close', async () => {
    const trickling = await startSandbox({
      port: 0,
      quiet: true,
      sizes: SMALL_SIZES,
      trickle: { everyMs: 40 },
    });
    const started = new Date(Date.now() - 1).toISOString();
    const seeded = trickling.data;
    const added = (): number =>
      trickling.data.fundingEvents.length +
      trickling.data.execMoves.length +
      trickling.data.acquisitions.length -
      (seeded.fundingEvents.length + seeded.execMoves.length + seeded.acquisitions.length);
    try {
      for (let waited = 0; added() < 6; waited += 20) {
        if (waited > 5_000) throw new Error(`only ${added()} events after 5 s`);
        await sleep(20);
      }
      const count = added();
      const served = await Promise.all(
        Object.values(PATHS).map(
          async (path) => (await get(trickling, path, { since: started, limit: 100 })).body.data,
        ),
      );
      // One may land between reading the count and the three requests.
      const total = served.reduce((sum, data) => sum + data.length, 0);
      expect(total).toBeGreaterThanOrEqual(count);
      expect(total).toBeLessThanOrEqual(added());
      expect(served.filter((data) => data.length > 0).length).toBeGreaterThanOrEqual(2);
      trickling.reset();
      expect(trickling.data).toBe(seeded);
    } finally {
      await trickling.close();
    }
    const after = added();
    await sleep(150);
    expect(added()).toBe(after);
  });

  it('refuses an interval below 1 ms or beyond what a timer takes', async () => {
    for (const everyMs of [0, 2 ** 31, Number.NaN]) {
      await expect(
        startSandbox({ port: 0, quiet: true, sizes: SMALL_SIZES, trickle: { everyMs } }),
      ).rejects.toThrow(/trickle.everyMs must be a number from 1 to 2147483647/);
    }
  });
});
