import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStandIn, type StandIn } from '../helpers/stand-in-service.js';

/**
 * A stand-in service that answers with records whose every field but `id` is null, or carries
 * values the spec does not list: the gateway must return them without failing the query.
 */
const ids = {
  company: '11111111-1111-4111-8111-111111111111',
  move: '22222222-2222-4222-8222-222222222222',
  deal: '33333333-3333-4333-8333-333333333333',
  round: '44444444-4444-4444-8444-444444444444',
  investor: '55555555-5555-4555-8555-555555555555',
};

const nullCompany = {
  id: ids.company,
  name: null,
  domain: null,
  description: null,
  linkedinHandle: null,
  linkedinUrl: null,
  linkedinGeoId: null,
  linkedinIndustryId: null,
  hqCity: null,
  hqCountry: { code: null, name: null },
  industryGroup: null,
  industrySubTags: [null, 'ai'],
  employeeCountBucket: null,
  foundedYear: null,
  businessModel: null,
  createdAt: null,
  updatedAt: null,
};

const records: Record<string, unknown[]> = {
  '/v1/companies': [nullCompany, null, { id: ids.company.replace('1111-4', '1112-4') }],
  '/v1/exec-moves': [
    {
      id: ids.move,
      person: null,
      company: null,
      fromCompany: null,
      role: null,
      roleSeniority: 'chief_vibes_officer',
      moveType: 'sabbatical',
      announcedAt: null,
      effectiveDate: null,
      discoveredAt: null,
      sources: null,
    },
  ],
  '/v1/acquisitions': [
    {
      id: ids.deal,
      acquirer: nullCompany,
      target: null,
      dealAmountUsdCents: null,
      dealAmountUsd: null,
      dealAmountOriginalCurrency: null,
      dealAmountOriginalCents: null,
      paymentType: 'crypto_swap',
      isMerger: null,
      announcedAt: null,
      closingAt: null,
      discoveredAt: null,
      sources: [null],
    },
  ],
  '/v1/funding-events': [
    {
      id: ids.round,
      company: null,
      round: 'series_z',
      amountUsdCents: 4_000_000_000_000,
      amountUsd: 40_000_000_000,
      amountOriginalCurrency: null,
      amountOriginalCents: null,
      investors: [null, { id: ids.investor, name: null }],
      announcedAt: null,
      discoveredAt: null,
      sources: [],
    },
  ],
  '/v1/investors': [
    {
      id: ids.investor,
      name: null,
      type: 'dao',
      hqCountry: null,
      domain: null,
      firstSeenAt: null,
      lastSeenAt: null,
      createdAt: null,
      updatedAt: null,
    },
  ],
};

let standIn: StandIn;
beforeAll(async () => {
  standIn = await startStandIn((url) => records[url.pathname] ?? []);
});
afterAll(() => standIn.close());
const gql = (query: string) => standIn.gql(query);

const COMPANY = `id uuid name domain description linkedinHandle linkedinUrl linkedinGeoId linkedinIndustryId
  hqCity hqCountry { code name } industryGroup industrySubTags employeeCountBucket foundedYear
  businessModel createdAt updatedAt`;

describe('nulls and values the spec does not list', () => {
  it('a null in every nullable position keeps the record and the query', async () => {
    const body = await gql(`{
      companies { nodes { ${COMPANY} } }
      execMoves { nodes { id uuid person { id } company { id } fromCompany { id } role roleSeniority moveType announcedAt effectiveDate discoveredAt sources { url } } }
      acquisitions { nodes { id uuid acquirer { name } target { id } dealAmountUsdCents dealAmountUsd dealAmountOriginalCurrency dealAmountOriginalCents paymentType isMerger announcedAt closingAt discoveredAt sources { url } } }
      fundingEvents { nodes { id uuid company { id } round amountUsdCents amountUsd amountOriginalCurrency amountOriginalCents investors { uuid name } announcedAt discoveredAt sources { url } } }
      investors { nodes { id uuid name type hqCountry { code } domain firstSeenAt lastSeenAt createdAt updatedAt } }
    }`);
    expect(body.errors).toBeUndefined();
    expect(body.data.companies.nodes[0]).toMatchObject({
      uuid: ids.company,
      name: null,
      hqCountry: { code: null, name: null },
      industrySubTags: ['ai'],
      foundedYear: null,
    });
    // A null record is skipped; one with every optional field absent altogether is served.
    expect(body.data.companies.nodes).toHaveLength(2);
    expect(body.data.companies.nodes[1]).toMatchObject({
      name: null,
      hqCountry: null,
      industrySubTags: null,
    });
    expect(body.data.execMoves.nodes[0]).toMatchObject({
      person: null,
      company: null,
      roleSeniority: 'chief_vibes_officer',
      moveType: 'sabbatical',
      sources: null,
    });
    expect(body.data.acquisitions.nodes[0]).toMatchObject({
      acquirer: { name: null },
      target: null,
      dealAmountUsdCents: null,
      isMerger: null,
      paymentType: 'crypto_swap',
      sources: [],
    });
    expect(body.data.fundingEvents.nodes[0]).toMatchObject({
      round: 'series_z',
      amountUsdCents: 4_000_000_000_000,
      investors: [{ uuid: ids.investor, name: null }],
      sources: [],
    });
    expect(body.data.investors.nodes[0]).toMatchObject({
      type: 'dao',
      hqCountry: null,
      firstSeenAt: null,
    });
    expect(body.extensions).toEqual({
      credits: { used: 7, saved: 0, remaining: 100, estimate: 100, budget: 1_000_000 },
      upstreamRequests: 5,
      upstreamRetries: 0,
    });
  });
});
