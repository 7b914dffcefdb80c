import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  generateDataset,
  startSandbox,
  type Company,
  type Dataset,
  type Sandbox,
} from '../../src/sandbox/index.js';
import { get, SMALL_SIZES, walk } from './sandbox-client.js';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const NON_ASCII = /[^\x20-\x7e]/;

describe('determinism', () => {
  it('gives identical data for the same seed and different data for another', () => {
    const a = generateDataset(5, SMALL_SIZES);
    const b = generateDataset(5, SMALL_SIZES);
    const c = generateDataset(6, SMALL_SIZES);
    expect(JSON.stringify(b)).toBe(JSON.stringify(a));
    expect(c.companies[10]?.id).not.toBe(a.companies[10]?.id);
    expect(a.epoch).toMatch(ISO_MS);
  });

  it('keeps the directories unchanged when only event counts change', () => {
    const a = generateDataset(5, SMALL_SIZES);
    const b = generateDataset(5, { ...SMALL_SIZES, fundingEvents: 10, execMoves: 1000 });
    expect(b.companies).toEqual(a.companies);
    expect(b.persons).toEqual(a.persons);
  });
});

describe('realistic default data', () => {
  let sandbox: Sandbox;
  let data: Dataset;

  beforeAll(async () => {
    const started = performance.now();
    sandbox = await startSandbox({ port: 0, quiet: true });
    data = sandbox.data;
    expect(performance.now() - started).toBeLessThan(15_000);
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  it('has the default sizes', () => {
    expect(
      [
        data.companies,
        data.investors,
        data.persons,
        data.fundingEvents,
        data.acquisitions,
        data.execMoves,
      ].map((l) => l.length),
    ).toEqual([20_000, 5_000, 20_000, 50_000, 10_000, 30_000]);
  });

  it('uses unique UUIDs, unique company domains and millisecond UTC timestamps', () => {
    const all = [
      data.companies,
      data.investors,
      data.persons,
      data.fundingEvents,
      data.acquisitions,
      data.execMoves,
    ].flat();
    expect(new Set(all.map((r) => r.id)).size).toBe(all.length);
    for (const r of all) expect(r.id).toMatch(UUID);
    expect(new Set(data.companies.map((c) => c.domain)).size).toBe(data.companies.length);
    const investorDomains = data.investors.map((i) => i.domain).filter((d) => d !== null);
    expect(new Set(investorDomains).size).toBe(investorDomains.length);
    expect(investorDomains.length).toBeGreaterThan(data.investors.length * 0.8);
    expect(investorDomains.length).toBeLessThan(data.investors.length);
    for (const e of data.fundingEvents.slice(0, 2000)) {
      for (const ts of [e.announcedAt, e.discoveredAt, ...e.sources.map((s) => s.extractedAt)])
        expect(ts).toMatch(ISO_MS);
    }
  });

  it('embeds directory companies, real investors and persons in events', () => {
    const companies = new Map(data.companies.map((c) => [c.id, c]));
    const investors = new Map(data.investors.map((i) => [i.id, i]));
    const persons = new Map(data.persons.map((p) => [p.id, p]));
    const embedded: Company[] = [];
    for (const e of data.fundingEvents) {
      embedded.push(e.company);
      expect(e.investors.length).toBeLessThanOrEqual(6);
      for (const ref of e.investors) expect(investors.get(ref.id)?.name).toBe(ref.name);
    }
    for (const a of data.acquisitions) {
      embedded.push(a.acquirer, a.target);
      expect(a.acquirer.id).not.toBe(a.target.id);
    }
    for (const m of data.execMoves) {
      embedded.push(m.company);
      if (m.fromCompany) embedded.push(m.fromCompany);
      expect(persons.get(m.person.id)).toEqual(m.person);
    }
    for (const c of embedded) expect(companies.get(c.id)).toEqual(c);
    const movesPerPerson = new Map<string, number>();
    for (const m of data.execMoves)
      movesPerPerson.set(m.person.id, (movesPerPerson.get(m.person.id) ?? 0) + 1);
    expect(Math.max(...movesPerPerson.values())).toBeGreaterThanOrEqual(3);
  });

  it('serves embedded companies equal to the directory over HTTP', async () => {
    const moves = await get(sandbox, '/v1/exec-moves', { limit: 100 });
    for (const move of moves.body.data) {
      const company = move.company as Company;
      const listed = await get(sandbox, '/v1/companies', { domain: company.domain });
      expect(listed.body.data).toEqual([company]);
    }
  });

  it('holds the values that break careless clients', () => {
    const cents = data.acquisitions.map((a) => a.dealAmountUsdCents).filter((c) => c !== null);
    expect(cents.filter((c) => c > 2 ** 31).length).toBeGreaterThan(100);
    expect(cents.filter((c) => c >= 1e11).length).toBeGreaterThan(10);
    expect(Math.max(...cents)).toBeLessThanOrEqual(4e12);
    for (const a of data.acquisitions) {
      expect(Number.isSafeInteger(a.dealAmountUsdCents ?? 0)).toBe(true);
      if (a.dealAmountUsdCents !== null) expect(a.dealAmountUsd).toBe(a.dealAmountUsdCents / 100);
      else
        expect([a.dealAmountUsd, a.dealAmountOriginalCurrency, a.dealAmountOriginalCents]).toEqual([
          null,
          null,
          null,
        ]);
    }
    expect(data.companies.filter((c) => c.description === null).length).toBeGreaterThan(0);
    expect(data.companies.filter((c) => c.foundedYear === null).length).toBeGreaterThan(0);
    expect(data.companies.filter((c) => c.linkedinHandle === null).length).toBeGreaterThan(0);
    expect(data.companies.filter((c) => c.industrySubTags.length === 0).length).toBeGreaterThan(0);
    expect(data.execMoves.filter((m) => m.fromCompany === null).length).toBeGreaterThan(0);
    expect(data.execMoves.filter((m) => m.announcedAt === null).length).toBeGreaterThan(0);
    expect(data.fundingEvents.filter((e) => e.amountUsdCents === null).length).toBeGreaterThan(0);
    expect(data.acquisitions.filter((a) => a.closingAt === null).length).toBeGreaterThan(0);
    expect(data.investors.filter((i) => i.hqCountry === null).length).toBeGreaterThan(0);
    expect(data.investors.filter((i) => i.firstSeenAt === null).length).toBeGreaterThan(0);
    expect(data.companies.filter((c) => NON_ASCII.test(c.name)).length).toBeGreaterThan(100);
    expect(data.persons.map((p) => p.name)).toContain('Zoë Ångström');
    expect(data.investors.map((i) => i.name)).toContain('Société Générale Ventures');
    expect(data.companies.some((c) => c.name.startsWith('株式会社'))).toBe(true);
    const names = data.companies.map((c) => c.name);
    expect(new Set(names).size).toBeLessThan(names.length);
  });

  it('uses the enumeration values of the spec among plausible others', () => {
    const values = (list: readonly string[]): Set<string> => new Set(list);
    expect(values(data.execMoves.map((m) => m.roleSeniority))).toContain('c_level');
    expect([...values(data.execMoves.map((m) => m.moveType))].sort()).toEqual([
      'appointment',
      'departure',
      'promotion',
      'transition',
    ]);
    expect(values(data.fundingEvents.map((e) => e.round))).toContain('series_a');
    expect(values(data.acquisitions.map((a) => a.paymentType ?? 'none'))).toContain('cash');
    expect(values(data.investors.map((i) => i.type))).toContain('vc');
    const buckets = values(data.companies.map((c) => c.employeeCountBucket));
    expect(buckets).toContain('51-200');
    for (const b of buckets) expect(b).toMatch(/^\d+-\d+$/);
    for (const c of data.companies.slice(0, 500)) {
      expect(c.hqCountry.code).toMatch(/^[A-Z]{2}$/);
      expect(c.hqCountry.name.length).toBeGreaterThan(3);
    }
  });

  it('answers a filtered page quickly on the default data', async () => {
    await walk(sandbox, '/v1/funding-events', {
      round: ['series_a'],
      country: 'DE',
      since: '2025-01-01',
    });
    sandbox.reset();
    for (let i = 0; i < 50; i++)
      await get(sandbox, '/v1/funding-events', { round: ['series_a'], limit: 20 });
    const times = sandbox
      .requestLog()
      .map((e) => e.serverMs)
      .sort((a, b) => a - b);
    expect(times[25]).toBeLessThan(20);
  });

  it('answers a poll with since at the present quickly on the default data', async () => {
    // As a subscription polls: nothing matches, yet the walk must not visit every event.
    const since = new Date().toISOString();
    sandbox.reset();
    for (const path of ['/v1/funding-events', '/v1/exec-moves', '/v1/acquisitions']) {
      for (let i = 0; i < 15; i++) {
        const page = await get(sandbox, path, { since, limit: 20 });
        expect(page.body.data).toEqual([]);
      }
    }
    const times = sandbox
      .requestLog()
      .map((e) => e.serverMs)
      .sort((a, b) => a - b);
    expect(times[22]).toBeLessThan(3);
  });
});
