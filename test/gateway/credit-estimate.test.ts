import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { NO_CACHE, startStack, type Stack, spentOn } from '../helpers/start-stack.js';

let stack: Stack;
beforeAll(async () => {
  // Counts the credits each case is charged: every page is fetched, whatever the cache holds.
  stack = await startStack({ headers: NO_CACHE });
});
afterAll(() => stack?.close());
beforeEach(() => stack.sandbox.reset());

/** Upstream requests and credits the sandbox saw since the last reset. */
const spent = () => spentOn(stack.sandbox);

/** Room for every case of the table: none of them is refused. */
const ROOMY = { headers: { 'x-credit-budget': '10000' } };

/** Ids and keys from the sandbox's data, read once through the gateway. */
interface Known {
  companyId: string;
  companyUuid: string;
  companyDomain: string;
  investorId: string;
  investorUuid: string;
  personId: string;
  personUuid: string;
  fundingEventId: string;
  midPageCursor: string;
  pageEndCursor: string;
}
let known: Known;
beforeAll(async () => {
  const { data } = await stack.gql(`{
    companies(first: 1) { nodes { id uuid domain } }
    investors(first: 1) { nodes { id uuid } }
    execMoves(first: 1) { nodes { person { id uuid } } }
    fundingEvents(first: 5) { nodes { id } edges { cursor } }
  }`);
  const company = data.companies.nodes[0];
  const investor = data.investors.nodes[0];
  const person = data.execMoves.nodes[0].person;
  known = {
    companyId: company.id,
    companyUuid: company.uuid,
    companyDomain: company.domain,
    investorId: investor.id,
    investorUuid: investor.uuid,
    personId: person.id,
    personUuid: person.uuid,
    fundingEventId: data.fundingEvents.nodes[0].id,
    // After the 3rd of 5 records: resuming re-reads the three before it.
    midPageCursor: data.fundingEvents.edges[2].cursor,
    // After the last record of the page: resuming starts at the next upstream page.
    pageEndCursor: data.fundingEvents.edges[4].cursor,
  };
});

interface Case {
  name: string;
  query: (k: Known) => string;
  variables?: (k: Known) => Record<string, unknown>;
  /** The estimate, where the shape is simple enough to know it exactly. */
  estimate?: number;
  /** The credits charged, where known exactly. */
  charged?: number;
  /**
   * The estimate counts a size the service does not bound at its assumed value (a lookup's rank,
   * a round's investors), so the operation may be charged more than it. Elsewhere the estimate is
   * exact, or above the charge where the same page is counted twice.
   */
  assumes?: true;
}

const cases: Case[] = [
  {
    name: 'a list: first records',
    query: () => `{ fundingEvents(first: 50) { nodes { uuid } } }`,
    estimate: 50,
    charged: 50,
  },
  {
    name: 'a list without first: the default page size',
    query: () => `{ companies { nodes { name } } }`,
    estimate: 20,
    charged: 20,
  },
  {
    name: 'first: 0 fetches nothing',
    query: () => `{ companies(first: 0) { nodes { name } } }`,
    estimate: 0,
    charged: 0,
  },
  {
    name: 'a nested edge: 50 + 50 x 3',
    query: () =>
      `{ fundingEvents(first: 50) { nodes { company { execMoves(first: 3) { nodes { uuid } } } } } }`,
    estimate: 200,
  },
  {
    name: 'edges and nodes of one connection are the same records',
    query: () => `{ investors(first: 7) { edges { cursor node { uuid } } nodes { name } } }`,
    estimate: 7,
    charged: 7,
  },
  {
    name: 'aliases with distinct filters add up',
    query: () => `{
      a: fundingEvents(first: 10, round: ["seed"]) { nodes { uuid } }
      b: fundingEvents(first: 10, round: ["series_a"]) { nodes { uuid } }
    }`,
    estimate: 20,
    charged: 20,
  },
  {
    name: 'aliases of the same page: counted twice, paid once',
    query: () =>
      `{ a: companies(first: 5) { nodes { uuid } } b: companies(first: 5) { nodes { name } } }`,
    estimate: 10,
    charged: 5,
  },
  {
    name: 'a named fragment',
    query: () => `
      fragment Deals on FundingEvent { company { acquisitions(first: 2) { nodes { uuid } } } }
      { fundingEvents(first: 10) { nodes { ...Deals } } }`,
    estimate: 30,
  },
  {
    name: 'an inline fragment',
    query: () => `{
      execMoves(first: 5) { nodes { ... on ExecMove { person { execMoves(first: 2) { nodes { uuid } } } } } }
    }`,
    estimate: 15,
  },
  {
    name: 'the same field from a fragment and directly is merged, as executed',
    query: () => `
      fragment Roles on FundingEvent { company { execMoves(first: 2) { nodes { role } } } }
      { fundingEvents(first: 5) { nodes { company { execMoves(first: 2) { nodes { uuid } } } ...Roles } } }`,
    estimate: 15,
  },
  {
    name: 'first from a variable',
    query: () => `query ($n: Int) { companies(first: $n) { nodes { uuid } } }`,
    variables: () => ({ n: 13 }),
    estimate: 13,
    charged: 13,
  },
  {
    name: "first from a variable's default",
    query: () => `query ($n: Int = 8) { companies(first: $n) { nodes { uuid } } }`,
    estimate: 8,
    charged: 8,
  },
  {
    name: '@skip with a variable set to true',
    query: () => `query ($skip: Boolean!) {
      a: companies(first: 5) @skip(if: $skip) { nodes { uuid } }
      b: investors(first: 3) { nodes { uuid } }
    }`,
    variables: () => ({ skip: true }),
    estimate: 3,
    charged: 3,
  },
  {
    name: '@include(if: false) on a fragment spread',
    query: () => `
      fragment Moves on Company { execMoves(first: 4) { nodes { uuid } } }
      { companies(first: 3) { nodes { uuid ...Moves @include(if: false) } } }`,
    estimate: 3,
    charged: 3,
  },
  {
    name: '@include with a variable set to true on an inline fragment',
    query: () => `query ($more: Boolean!) {
      companies(first: 3) { nodes { uuid ... @include(if: $more) { execMoves(first: 4) { nodes { uuid } } } } }
    }`,
    variables: () => ({ more: true }),
    estimate: 15,
  },
  {
    name: 'above 100: chained upstream pages',
    query: () => `{ fundingEvents(first: 250) { nodes { uuid } } }`,
    estimate: 250,
    charged: 250,
  },
  {
    name: 'after a cursor inside a page: the records before it are read again',
    query: (k) => `{ fundingEvents(first: 5, after: "${k.midPageCursor}") { nodes { uuid } } }`,
    estimate: 8,
    charged: 8,
  },
  {
    name: "after a cursor at a page's end: nothing is read again",
    query: (k) => `{ fundingEvents(first: 5, after: "${k.pageEndCursor}") { nodes { uuid } } }`,
    estimate: 5,
    charged: 5,
  },
  {
    name: 'company by domain',
    query: (k) => `{ company(domain: "${k.companyDomain}") { name } }`,
    estimate: 1,
    charged: 1,
  },
  {
    name: 'company by id (domain hint): the first record with its domain, assumed',
    query: (k) => `{ company(id: "${k.companyId}") { name } }`,
    estimate: 1,
    charged: 1,
    assumes: true,
  },
  {
    name: 'company by bare uuid: the first event list naming it, assumed (three at most)',
    query: (k) => `{ company(uuid: "${k.companyUuid}") { name } }`,
    estimate: 1,
    charged: 1,
    assumes: true,
  },
  {
    name: 'investor by id: the name search, first in it assumed',
    query: (k) => `{ investor(id: "${k.investorId}") { type } }`,
    estimate: 1,
    assumes: true,
  },
  {
    name: 'investor by bare uuid: nothing to search by, nothing spent',
    query: (k) => `{ investor(uuid: "${k.investorUuid}") { type } }`,
    estimate: 0,
    charged: 0,
  },
  {
    name: 'person by uuid: one of their moves',
    query: (k) => `{ person(uuid: "${k.personUuid}") { name } }`,
    estimate: 1,
    charged: 1,
  },
  {
    name: 'a lookup with a connection under it',
    query: (k) => `{
      company(domain: "${k.companyDomain}") {
        fundingEvents(first: 4) { nodes { uuid } }
        acquisitions(first: 2) { nodes { uuid } }
      }
    }`,
    estimate: 7,
  },
  {
    name: 'node: the type its id names, and only that type of fragment',
    query: (k) => `{
      node(id: "${k.companyId}") {
        ... on Company { execMoves(first: 3) { nodes { uuid } } }
        ... on Person { execMoves(first: 50) { nodes { uuid } } }
      }
    }`,
    estimate: 1 + 3,
    assumes: true,
  },
  {
    name: 'nodes: each id at its own assumed cost',
    query: () => `query ($ids: [ID!]!) { nodes(ids: $ids) { id } }`,
    variables: (k) => ({ ids: [k.companyId, k.personId, k.investorId, k.fundingEventId] }),
    estimate: 1 + 1 + 1 + 1,
    assumes: true,
  },
  {
    name: "a round's investors by name only: free",
    query: () => `{ fundingEvents(first: 6) { nodes { investors { id uuid name } } } }`,
    estimate: 6,
    charged: 6,
  },
  {
    name: "a round's investor details: 3 investors assumed per round, 1 credit each",
    query: () => `{ fundingEvents(first: 2) { nodes { investors { name type } } } }`,
    estimate: 2 + 2 * 3 * 1,
    assumes: true,
  },
  {
    name: 'three levels of lists',
    query: () => `{
      execMoves(first: 3) { nodes { person { execMoves(first: 2) { nodes {
        company { fundingEvents(first: 2) { nodes { uuid } } }
      } } } } }
    }`,
    estimate: 3 + 3 * 2 + 3 * 2 * 2,
  },
  {
    name: 'introspection and __typename: nothing',
    query: () => `{ __typename __schema { queryType { name } } }`,
    estimate: 0,
    charged: 0,
  },
];

describe('the credit estimate, against what the sandbox charged', () => {
  it(`has at least 25 cases (${cases.length})`, () => {
    expect(cases.length).toBeGreaterThanOrEqual(25);
  });

  it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const response = await stack.gql(c.query(known), c.variables?.(known), ROOMY);
    expect(response.errors).toBeUndefined();
    const { estimate, used, budget } = response.extensions!.credits as Record<string, number>;
    const charged = spent().credits;
    expect(used).toBe(charged);
    expect(charged).toBeLessThanOrEqual(budget!);
    if (!c.assumes) expect(charged).toBeLessThanOrEqual(estimate!);
    if (c.estimate !== undefined) expect(estimate).toBe(c.estimate);
    if (c.charged !== undefined) expect(charged).toBe(c.charged);
  });
});

describe('forged ids in the estimate', () => {
  it('count nothing: 56 made-up or altered investor ids fit a budget of 1 and cost nothing', async () => {
    const unsigned = (i: number) =>
      Buffer.from(`Investor:${known.investorUuid}|Made Up Capital ${i}`).toString('base64url');
    const [body, signature] = known.investorId.split('.');
    const altered = `${body}.${signature!.slice(0, -1)}${signature!.endsWith('A') ? 'B' : 'A'}`;
    const ids = [...Array.from({ length: 55 }, (_, i) => unsigned(i)), altered];
    const response = await stack.gql(
      `query ($ids: [ID!]!) { nodes(ids: $ids) { id } }`,
      { ids },
      {
        headers: { 'x-credit-budget': '1' },
      },
    );
    expect(response.errors?.map((e) => e.extensions?.code)).toContain('INVALID_INPUT');
    expect(response.extensions!.credits).toMatchObject({ estimate: 0, used: 0 });
    expect(spent()).toEqual({ requests: 0, credits: 0 });
  });
});
