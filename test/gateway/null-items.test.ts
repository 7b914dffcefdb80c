import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config.js';
import { encodeGlobalId } from '../../src/nodes/global-id.js';
import { startStandIn, type StandIn } from '../helpers/stand-in-service.js';

/**
 * A stand-in service whose every page holds a null item at a position the test chooses, and whose
 * embedded lists (sources, investors, industry tags) hold nulls too: the other items must be
 * served, with no error, and lookups must look past the null.
 */
const uuid = (n: number) => `${String(n).padStart(8, '0')}-0000-4000-8000-000000000000`;
const company = (n: number) => ({
  id: uuid(100 + n),
  name: `Company ${n}`,
  domain: `c${n}.example`,
  industrySubTags: [null, 'ai'],
});
const person = (n: number) => ({ id: uuid(200 + n), name: `Person ${n}` });
const sources = [null, { url: 'https://news.example/1', extractedAt: '2025-01-01T00:00:00.000Z' }];

const records: Record<string, object[]> = {
  '/v1/companies': [1, 2, 3].map(company),
  '/v1/investors': [1, 2, 3].map((n) => ({ id: uuid(300 + n), name: `Investor ${n}`, type: 'vc' })),
  '/v1/exec-moves': [1, 2, 3].map((n) => ({
    id: uuid(400 + n),
    person: person(n),
    company: company(n),
    fromCompany: null,
    role: 'CTO',
    discoveredAt: '2025-01-01T00:00:00.000Z',
    sources,
  })),
  '/v1/acquisitions': [1, 2, 3].map((n) => ({
    id: uuid(500 + n),
    acquirer: company(n),
    target: null,
    dealAmountUsdCents: 4_000_000_000_000,
    discoveredAt: '2025-01-01T00:00:00.000Z',
    sources,
  })),
  '/v1/funding-events': [1, 2, 3].map((n) => ({
    id: uuid(600 + n),
    company: company(n),
    round: 'seed',
    investors: [null, { id: uuid(300 + n), name: `Investor ${n}` }],
    discoveredAt: '2025-01-01T00:00:00.000Z',
    sources,
  })),
};

/** Where the null goes in each page: 0 (first) to 3 (after the three records). */
let nullAt = 0;
let standIn: StandIn;
beforeAll(async () => {
  standIn = await startStandIn((url) => {
    const data: (object | null)[] = [...(records[url.pathname] ?? [])];
    data.splice(nullAt, 0, null);
    return data;
  });
});
afterAll(() => standIn.close());
const gql = (query: string, variables?: Record<string, unknown>) => standIn.gql(query, variables);

const LISTS = `{
  companies(first: 4) { nodes { uuid industrySubTags } edges { cursor } }
  investors(first: 4) { nodes { uuid type } }
  execMoves(first: 4) { nodes { id uuid person { uuid } company { uuid } sources { url } } }
  acquisitions(first: 4) { nodes { id uuid acquirer { uuid } dealAmountUsdCents sources { url } } }
  fundingEvents(first: 4) { nodes { id uuid company { uuid } investors { uuid name type } sources { url } } }
}`;

describe('a null item in a page', () => {
  it.each([0, 1, 2, 3])(
    'at position %i of every endpoint: the other items, in order, and no error',
    async (position) => {
      nullAt = position;
      const body = await gql(LISTS);
      expect(body.errors).toBeUndefined();
      const uuids = (list: { nodes: { uuid: string }[] }) => list.nodes.map((node) => node.uuid);
      expect(uuids(body.data.companies)).toEqual([uuid(101), uuid(102), uuid(103)]);
      expect(uuids(body.data.investors)).toEqual([uuid(301), uuid(302), uuid(303)]);
      expect(uuids(body.data.execMoves)).toEqual([uuid(401), uuid(402), uuid(403)]);
      expect(uuids(body.data.acquisitions)).toEqual([uuid(501), uuid(502), uuid(503)]);
      expect(uuids(body.data.fundingEvents)).toEqual([uuid(601), uuid(602), uuid(603)]);
      // Embedded lists drop their null items too.
      expect(body.data.companies.nodes[0].industrySubTags).toEqual(['ai']);
      expect(body.data.execMoves.nodes[0].sources).toEqual([{ url: 'https://news.example/1' }]);
      // Investor details are loaded by a name search whose page holds a null as well.
      expect(body.data.fundingEvents.nodes[2].investors).toEqual([
        { uuid: uuid(303), name: 'Investor 3', type: 'vc' },
      ]);
    },
  );

  it.each([0, 1])('at position %i of a lookup page: the lookup looks past it', async (position) => {
    nullAt = position;
    // Ids as the gateway signs them (the stand-in runs with the default CURSOR_SECRET).
    const id = (typename: string, localId: string) =>
      encodeGlobalId(typename, localId, defaultConfig.cursorSecret);
    const ids = {
      company: uuid(101),
      person: id('Person', uuid(201)),
      move: id('ExecMove', `${uuid(401)}|${uuid(201)}|2025-01-01T00:00:00.000Z`),
      deal: id('Acquisition', `${uuid(501)}|${uuid(101)}|2025-01-01T00:00:00.000Z`),
      round: id('FundingEvent', `${uuid(601)}|${uuid(101)}|2025-01-01T00:00:00.000Z|seed`),
    };
    const body = await gql(
      `query ($person: ID!, $move: ID!, $deal: ID!, $round: ID!) {
        company(uuid: "${ids.company}") { uuid }
        person(id: $person) { uuid }
        move: node(id: $move) { id }
        deal: node(id: $deal) { id }
        round: node(id: $round) { id }
      }`,
      ids,
    );
    expect(body.errors).toBeUndefined();
    expect(body.data.company).toEqual({ uuid: ids.company });
    expect(body.data.person).toEqual({ uuid: uuid(201) });
    expect(body.data.move).toEqual({ id: ids.move });
    expect(body.data.deal).toEqual({ id: ids.deal });
    expect(body.data.round).toEqual({ id: ids.round });
  });
});
