import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startSandbox,
  type Acquisition,
  type Company,
  type ExecMove,
  type FundingEvent,
  type Investor,
  type Sandbox,
} from '../../src/sandbox/index.js';
import { byDiscovery, byName, ids, SMALL_SIZES, walk, type Query } from './sandbox-client.js';

let sandbox: Sandbox;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, quiet: true, sizes: SMALL_SIZES, seed: 7 });
});
afterAll(async () => {
  await sandbox?.close();
});

const t = (iso: string | null): number | null => (iso === null ? null : Date.parse(iso));
const fold = (s: string): string => s.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
const keywordMatch = (fields: (string | null)[], search: string): boolean => {
  const text = fields.filter((f) => f !== null).join(' ');
  return search
    .split(/\s+/)
    .filter(Boolean)
    .every((k) => text.toLowerCase().includes(k.toLowerCase()) || fold(text).includes(fold(k)));
};
const median = (values: string[]): string =>
  [...values].sort()[Math.floor(values.length / 2)] as string;

/** A bound equal to the discovery time of an event announced later: only the announcedAt rule keeps it. */
function lateAnnouncement(
  events: readonly { discoveredAt: string; announcedAt: string | null }[],
): string {
  const late = events.find((e) => e.announcedAt !== null && e.announcedAt > e.discoveredAt);
  if (!late) throw new Error('no event announced after its discovery');
  return late.discoveredAt;
}

/** A bound equal to the discovery time of an event announced earlier: only the announcedAt rule keeps it. */
function earlyAnnouncement(
  events: readonly { discoveredAt: string; announcedAt: string | null }[],
): string {
  const early = events.find((e) => e.announcedAt !== null && e.announcedAt < e.discoveredAt);
  if (!early) throw new Error('no event announced before its discovery');
  return early.discoveredAt;
}

const after = (bound: string, ...times: (string | null)[]): boolean =>
  times.some((x) => x !== null && Date.parse(x) > Date.parse(bound));
const before = (bound: string, ...times: (string | null)[]): boolean =>
  times.some((x) => x !== null && Date.parse(x) < Date.parse(bound));

interface Case<R> {
  name: string;
  query: Query;
  expected: (r: R) => boolean;
}

async function check<R extends { id: string }>(
  path: string,
  all: readonly R[],
  order: (records: readonly R[]) => R[],
  cases: Case<R>[],
): Promise<void> {
  for (const c of cases) {
    const expected = order(all.filter(c.expected));
    const { records } = await walk(sandbox, path, c.query);
    expect(ids(records), `${path} ${c.name}`).toEqual(ids(expected));
    expect(expected.length, `${path} ${c.name} selects something`).toBeGreaterThan(0);
    if (Object.keys(c.query).length > 0) {
      expect(expected.length, `${path} ${c.name} filters something out`).toBeLessThan(all.length);
    }
  }
}

describe('GET /v1/exec-moves', () => {
  it('applies every filter, alone and combined, in discovery order', async () => {
    const moves = sandbox.data.execMoves;
    const counts = new Map<string, number>();
    for (const m of moves) counts.set(m.person.id, (counts.get(m.person.id) ?? 0) + 1);
    const busyPerson = [...counts].sort((a, b) => b[1] - a[1])[0]?.[0] as string;
    const company = (moves[3] as ExecMove).company.id;
    const mid = median(moves.map((m) => m.discoveredAt));
    const since = t(mid) as number;
    const cases: Case<ExecMove>[] = [
      { name: 'none', query: {}, expected: () => true },
      {
        name: 'companyId',
        query: { companyId: company.toUpperCase() },
        expected: (m) => m.company.id === company,
      },
      {
        name: 'personId',
        query: { personId: busyPerson },
        expected: (m) => m.person.id === busyPerson,
      },
      {
        name: 'roleSeniority',
        query: { roleSeniority: ['c_level'] },
        expected: (m) => m.roleSeniority === 'c_level',
      },
      {
        name: 'roleSeniority x2',
        query: { roleSeniority: ['vp', 'board'] },
        expected: (m) => m.roleSeniority === 'vp' || m.roleSeniority === 'board',
      },
      {
        name: 'moveType',
        query: { moveType: ['departure'] },
        expected: (m) => m.moveType === 'departure',
      },
      {
        name: 'moveType x2',
        query: { moveType: ['appointment', 'transition'] },
        expected: (m) => m.moveType === 'appointment' || m.moveType === 'transition',
      },
      {
        name: 'since',
        query: { since: mid },
        expected: (m) =>
          (t(m.discoveredAt) as number) > since || (t(m.announcedAt) ?? -Infinity) > since,
      },
      {
        name: 'until',
        query: { until: mid },
        expected: (m) =>
          (t(m.discoveredAt) as number) < since || (t(m.announcedAt) ?? Infinity) < since,
      },
      {
        name: 'since at a late announcement',
        query: { since: lateAnnouncement(moves) },
        expected: (m) => after(lateAnnouncement(moves), m.discoveredAt, m.announcedAt),
      },
      {
        name: 'until at an early announcement',
        query: { until: earlyAnnouncement(moves) },
        expected: (m) => before(earlyAnnouncement(moves), m.discoveredAt, m.announcedAt),
      },
      {
        name: 'since+until+roleSeniority',
        query: {
          since: '2024-01-01',
          until: '2024-12-31T00:00:00+02:00',
          roleSeniority: ['c_level', 'vp'],
        },
        expected: (m) =>
          ((t(m.discoveredAt) as number) > Date.parse('2024-01-01T00:00:00Z') ||
            (t(m.announcedAt) ?? -Infinity) > Date.parse('2024-01-01T00:00:00Z')) &&
          ((t(m.discoveredAt) as number) < Date.parse('2024-12-30T22:00:00Z') ||
            (t(m.announcedAt) ?? Infinity) < Date.parse('2024-12-30T22:00:00Z')) &&
          ['c_level', 'vp'].includes(m.roleSeniority),
      },
    ];
    await check('/v1/exec-moves', moves, byDiscovery, cases);
  });
});

describe('GET /v1/acquisitions', () => {
  it('applies every filter, alone and combined, in discovery order', async () => {
    const deals = sandbox.data.acquisitions;
    const asTarget = new Set(deals.map((d) => d.target.id));
    const both =
      deals.find((d) => asTarget.has(d.acquirer.id))?.acquirer.id ??
      (deals[0] as Acquisition).acquirer.id;
    const mid = median(deals.map((d) => d.discoveredAt));
    const dollars = (d: Acquisition): number | null =>
      d.dealAmountUsdCents === null ? null : d.dealAmountUsdCents / 100;
    const cases: Case<Acquisition>[] = [
      { name: 'none', query: {}, expected: () => true },
      {
        name: 'paymentType',
        query: { paymentType: ['cash'] },
        expected: (d) => d.paymentType === 'cash',
      },
      {
        name: 'paymentType x2',
        query: { paymentType: ['stock', 'mixed'] },
        expected: (d) => d.paymentType === 'stock' || d.paymentType === 'mixed',
      },
      {
        name: 'minAmountUsd',
        query: { minAmountUsd: 21_500_000 },
        expected: (d) => (dollars(d) ?? -1) >= 21_500_000,
      },
      {
        name: 'maxAmountUsd',
        query: { maxAmountUsd: '50000000.5' },
        expected: (d) => (dollars(d) ?? Infinity) <= 50_000_000.5,
      },
      {
        name: 'min+max',
        query: { minAmountUsd: 1e9, maxAmountUsd: 4e10 },
        expected: (d) =>
          dollars(d) !== null && (dollars(d) as number) >= 1e9 && (dollars(d) as number) <= 4e10,
      },
      { name: 'isMerger true', query: { isMerger: true }, expected: (d) => d.isMerger },
      { name: 'isMerger false', query: { isMerger: false }, expected: (d) => !d.isMerger },
      {
        name: 'companyId (acquirer or target)',
        query: { companyId: both },
        expected: (d) => d.acquirer.id === both || d.target.id === both,
      },
      {
        name: 'since',
        query: { since: mid },
        expected: (d) =>
          Date.parse(d.discoveredAt) > Date.parse(mid) ||
          Date.parse(d.announcedAt) > Date.parse(mid),
      },
      {
        name: 'since at a late announcement',
        query: { since: lateAnnouncement(deals) },
        expected: (d) => after(lateAnnouncement(deals), d.discoveredAt, d.announcedAt),
      },
      {
        name: 'paymentType+isMerger+min',
        query: { paymentType: ['cash', 'stock'], isMerger: false, minAmountUsd: 1_000_000 },
        expected: (d) =>
          ['cash', 'stock'].includes(d.paymentType ?? '') &&
          !d.isMerger &&
          (dollars(d) ?? -1) >= 1_000_000,
      },
    ];
    const roles = deals.filter((d) => d.acquirer.id === both || d.target.id === both);
    expect(new Set(roles.map((d) => (d.acquirer.id === both ? 'acquirer' : 'target'))).size).toBe(
      2,
    );
    await check('/v1/acquisitions', deals, byDiscovery, cases);
  });
});

describe('GET /v1/funding-events', () => {
  it('applies every filter, alone and combined, in discovery order', async () => {
    const events = sandbox.data.fundingEvents;
    const company = (events[5] as FundingEvent).company.id;
    const mid = median(events.map((e) => e.discoveredAt));
    const dollars = (e: FundingEvent): number | null =>
      e.amountUsdCents === null ? null : e.amountUsdCents / 100;
    const cases: Case<FundingEvent>[] = [
      { name: 'none', query: {}, expected: () => true },
      { name: 'round', query: { round: ['series_a'] }, expected: (e) => e.round === 'series_a' },
      {
        name: 'round x2',
        query: { round: ['seed', 'grant'] },
        expected: (e) => e.round === 'seed' || e.round === 'grant',
      },
      {
        name: 'minAmountUsd',
        query: { minAmountUsd: 10_000_000 },
        expected: (e) => (dollars(e) ?? -1) >= 10_000_000,
      },
      {
        name: 'maxAmountUsd',
        query: { maxAmountUsd: 2_000_000 },
        expected: (e) => (dollars(e) ?? Infinity) <= 2_000_000,
      },
      {
        name: 'country (lower case)',
        query: { country: 'us' },
        expected: (e) => e.company.hqCountry.code === 'US',
      },
      {
        name: 'industryGroup',
        query: { industryGroup: 'Fintech' },
        expected: (e) => e.company.industryGroup === 'Fintech',
      },
      {
        name: 'companyId',
        query: { companyId: company },
        expected: (e) => e.company.id === company,
      },
      {
        name: 'since',
        query: { since: mid },
        expected: (e) =>
          Date.parse(e.discoveredAt) > Date.parse(mid) ||
          Date.parse(e.announcedAt) > Date.parse(mid),
      },
      {
        name: 'since at a late announcement',
        query: { since: lateAnnouncement(events) },
        expected: (e) => after(lateAnnouncement(events), e.discoveredAt, e.announcedAt),
      },
      {
        name: 'round+country',
        query: { round: ['seed', 'series_a'], country: 'US' },
        expected: (e) =>
          ['seed', 'series_a'].includes(e.round) && e.company.hqCountry.code === 'US',
      },
    ];
    await check('/v1/funding-events', events, byDiscovery, cases);
  });
});

describe('GET /v1/companies', () => {
  it('applies every filter, alone and combined, in name order', async () => {
    const companies = sandbox.data.companies;
    const some = companies[40] as Company;
    const mid = median(companies.map((c) => c.updatedAt));
    const cases: Case<Company>[] = [
      { name: 'none', query: {}, expected: () => true },
      {
        name: 'search keyword',
        query: { search: 'payments' },
        expected: (c) => keywordMatch([c.name, c.domain, c.description], 'payments'),
      },
      {
        name: 'search case-insensitive, two keywords',
        query: { search: 'FOR Focus' },
        expected: (c) => keywordMatch([c.name, c.domain, c.description], 'for focus'),
      },
      {
        name: 'search non-ASCII',
        query: { search: 'müller' },
        expected: (c) => keywordMatch([c.name, c.domain, c.description], 'müller'),
      },
      {
        name: 'domain (case-insensitive)',
        query: { domain: some.domain.toUpperCase() },
        expected: (c) => c.domain === some.domain,
      },
      { name: 'country', query: { country: 'de' }, expected: (c) => c.hqCountry.code === 'DE' },
      {
        name: 'industryGroup',
        query: { industryGroup: 'Healthcare' },
        expected: (c) => c.industryGroup === 'Healthcare',
      },
      {
        name: 'employeeCountBucket',
        query: { employeeCountBucket: '51-200' },
        expected: (c) => c.employeeCountBucket === '51-200',
      },
      {
        name: 'foundedYearMin',
        query: { foundedYearMin: 2015 },
        expected: (c) => (c.foundedYear ?? -1) >= 2015,
      },
      {
        name: 'foundedYearMax',
        query: { foundedYearMax: 2000 },
        expected: (c) => (c.foundedYear ?? Infinity) <= 2000,
      },
      {
        name: 'since',
        query: { since: mid },
        expected: (c) =>
          Date.parse(c.createdAt) > Date.parse(mid) || Date.parse(c.updatedAt) > Date.parse(mid),
      },
      {
        name: 'since at a creation time (only updatedAt can match)',
        query: { since: (companies.find((c) => c.updatedAt > c.createdAt) as Company).createdAt },
        expected: (c) =>
          after(
            (companies.find((x) => x.updatedAt > x.createdAt) as Company).createdAt,
            c.createdAt,
            c.updatedAt,
          ),
      },
      {
        name: 'country+years',
        query: { country: 'US', foundedYearMin: 2010, foundedYearMax: 2020 },
        expected: (c) =>
          c.hqCountry.code === 'US' &&
          c.foundedYear !== null &&
          c.foundedYear >= 2010 &&
          c.foundedYear <= 2020,
      },
    ];
    await check('/v1/companies', companies, byName, cases);
  });

  it('finds accented names from an unaccented search', async () => {
    const { records } = await walk(sandbox, '/v1/companies', { search: 'muller robotik' });
    expect(records.map((r) => r.name)).toContain('Müller Robotik GmbH');
  });
});

describe('GET /v1/investors', () => {
  it('applies every filter, alone and combined, in name order', async () => {
    const investors = sandbox.data.investors;
    const withDomain = investors.find((i, n) => n > 10 && i.domain !== null) as Investor;
    const mid = median(investors.map((i) => i.createdAt));
    const cases: Case<Investor>[] = [
      { name: 'none', query: {}, expected: () => true },
      {
        name: 'search',
        query: { search: 'ventures' },
        expected: (i) => keywordMatch([i.name, i.domain], 'ventures'),
      },
      { name: 'type', query: { type: ['vc'] }, expected: (i) => i.type === 'vc' },
      {
        name: 'type comma-separated',
        query: { type: 'vc,angel' },
        expected: (i) => i.type === 'vc' || i.type === 'angel',
      },
      {
        name: 'type repeated and comma-separated',
        query: { type: ['corporate_vc,government', 'angel'] },
        expected: (i) => ['corporate_vc', 'government', 'angel'].includes(i.type),
      },
      { name: 'country', query: { country: 'US' }, expected: (i) => i.hqCountry?.code === 'US' },
      {
        name: 'domain',
        query: { domain: withDomain.domain as string },
        expected: (i) => i.domain === withDomain.domain,
      },
      {
        name: 'since',
        query: { since: mid },
        expected: (i) =>
          Date.parse(i.createdAt) > Date.parse(mid) || Date.parse(i.updatedAt) > Date.parse(mid),
      },
    ];
    await check('/v1/investors', investors, byName, cases);
  });
});
