import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  NO_CACHE,
  spentOn,
  startStack,
  type GraphQLResponse,
  type Stack,
} from '../helpers/start-stack.js';

/**
 * The credit estimate against what realistic operations are charged: it counts the sizes the
 * service does not bound (investors per round, a record's rank in its lookup list) at assumed
 * values, so it should stay near the charge, and the budget, not the estimate, stops spending.
 */

let stack: Stack;
beforeAll(async () => {
  // Credits are counted whatever the page cache holds: every page is fetched and charged.
  stack = await startStack({ headers: NO_CACHE });
});
afterAll(() => stack?.close());
beforeEach(() => stack.sandbox.reset());

/** The estimate may be above the charge, by at most this factor. */
const FIT = 3;

/** POSTs to the subgraph endpoint, as a federation router does. */
async function subgraph(query: string, variables: Record<string, unknown>) {
  const response = await fetch(`${stack.origin}/subgraph`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-api-key': stack.sandbox.keys.demo,
      ...NO_CACHE,
    },
    body: JSON.stringify({ query, variables }),
  });
  return { status: response.status, ...((await response.json()) as object) } as GraphQLResponse;
}

/** Ids and keys of records of every node type, read once through the gateway. */
interface Known {
  company: { id: string; uuid: string; domain: string };
  /** A company with at least three funding rounds. */
  roundsCompany: { domain: string };
  investor: { id: string; uuid: string; name: string; domain: string };
  person: { id: string; uuid: string };
  fundingEvent: { id: string; uuid: string; company: { uuid: string } };
  execMove: { id: string; uuid: string; person: { uuid: string } };
  acquisition: { id: string; uuid: string; acquirer: { uuid: string } };
}
let known: Known;
beforeAll(async () => {
  const { data } = await stack.gql(`{
    companies(first: 1) { nodes { id uuid domain } }
    investors(first: 20) { nodes { id uuid name domain } }
    fundingEvents(first: 1) { nodes { id uuid company { uuid } } }
    execMoves(first: 2) { nodes { id uuid person { id uuid } } }
    acquisitions(first: 1) { nodes { id uuid acquirer { uuid } } }
  }`);
  const rounds = new Map<string, number>();
  for (const event of stack.sandbox.data.fundingEvents) {
    rounds.set(event.company.domain, (rounds.get(event.company.domain) ?? 0) + 1);
  }
  const [roundsDomain] = [...rounds].find(([, count]) => count >= 3)!;
  const [move, otherMove] = data.execMoves.nodes;
  known = {
    company: data.companies.nodes[0],
    roundsCompany: { domain: roundsDomain },
    investor: data.investors.nodes.find((i: { domain: string | null }) => i.domain),
    // Another move's person: a person embedded in a move the operation reads costs nothing.
    person: otherMove.person,
    fundingEvent: data.fundingEvents.nodes[0],
    execMove: move,
    acquisition: data.acquisitions.nodes[0],
  };
});

interface Row {
  name: string;
  query: (k: Known) => string;
  variables?: (k: Known) => Record<string, unknown>;
  /** Sent to `/subgraph`, as a federation router does; else to `/graphql`. */
  subgraph?: true;
}

const rows: Row[] = [
  {
    name: 'funding rounds: a page, with their companies',
    query: () =>
      `{ fundingEvents(first: 20) { nodes { uuid round amountUsd announcedAt company { name domain } } } }`,
  },
  {
    name: 'companies in a country',
    query: () =>
      `{ companies(first: 25, country: "US") { nodes { name domain hqCity employeeCountBucket } } }`,
  },
  {
    name: 'C-level executive moves',
    query: () =>
      `{ execMoves(first: 20, roleSeniority: ["c_level"]) { nodes { role moveType person { name } company { name } } } }`,
  },
  {
    name: 'acquisitions: a page',
    query: () =>
      `{ acquisitions(first: 20) { nodes { dealAmountUsd isMerger acquirer { name } target { name } } } }`,
  },
  {
    name: "companies' funding rounds and executive moves",
    query: () => `{ companies(first: 5) { nodes { name
      fundingEvents(first: 3) { nodes { round amountUsd } }
      execMoves(first: 3) { nodes { role } } } } }`,
  },
  {
    name: "executive moves with the person's other moves",
    query: () =>
      `{ execMoves(first: 10) { nodes { role person { name execMoves(first: 3) { nodes { role company { name } } } } } } }`,
  },
  {
    name: 'investor details under rounds',
    query: () => `{ fundingEvents(first: 10) { nodes { round investors { name type domain } } } }`,
  },
  {
    name: 'investor details under series B rounds',
    query: () =>
      `{ fundingEvents(first: 10, round: ["series_b"]) { nodes { amountUsd investors { name type hqCountry { code } } } } }`,
  },
  {
    name: "a company by domain: its rounds and their investors' details",
    query: (k) => `{ company(domain: "${k.roundsCompany.domain}") { name
      fundingEvents(first: 3) { nodes { round investors { name type } } } } }`,
  },
  {
    name: 'node(id:) of a Company',
    query: (k) =>
      `{ node(id: "${k.company.id}") { ... on Company { name domain hqCountry { name } } } }`,
  },
  {
    name: 'node(id:) of an Investor',
    query: (k) => `{ node(id: "${k.investor.id}") { ... on Investor { name type domain } } }`,
  },
  {
    name: 'node(id:) of a Person, with their moves',
    query: (k) =>
      `{ node(id: "${k.person.id}") { ... on Person { name execMoves(first: 3) { nodes { role } } } } }`,
  },
  {
    name: 'node(id:) of a FundingEvent',
    query: (k) =>
      `{ node(id: "${k.fundingEvent.id}") { ... on FundingEvent { round amountUsd } } }`,
  },
  {
    name: 'node(id:) of an ExecMove',
    query: (k) => `{ node(id: "${k.execMove.id}") { ... on ExecMove { role moveType } } }`,
  },
  {
    name: 'node(id:) of an Acquisition',
    query: (k) => `{ node(id: "${k.acquisition.id}") { ... on Acquisition { dealAmountUsd } } }`,
  },
  {
    name: 'nodes(ids:) across the six types',
    query: () => `query ($ids: [ID!]!) { nodes(ids: $ids) { id __typename } }`,
    variables: (k) => ({
      ids: [
        k.company.id,
        k.investor.id,
        k.person.id,
        k.fundingEvent.id,
        k.execMove.id,
        k.acquisition.id,
      ],
    }),
  },
  {
    name: 'company(domain:) with its latest rounds',
    query: (k) =>
      `{ company(domain: "${k.company.domain}") { name fundingEvents(first: 3) { nodes { round } } } }`,
  },
  {
    name: 'investor(domain:)',
    query: (k) => `{ investor(domain: "${k.investor.domain}") { name type hqCountry { code } } }`,
  },
  {
    name: 'investor(id:)',
    query: (k) => `{ investor(id: "${k.investor.id}") { name type } }`,
  },
  {
    name: '_entities by id, four types',
    subgraph: true,
    query: () => `query ($r: [_Any!]!) { _entities(representations: $r) { __typename
      ... on Company { name } ... on Investor { type } ... on FundingEvent { round } ... on Person { name } } }`,
    variables: (k) => ({
      r: [
        { __typename: 'Company', id: k.company.id },
        { __typename: 'Investor', id: k.investor.id },
        { __typename: 'FundingEvent', id: k.fundingEvent.id },
        { __typename: 'Person', id: k.person.id },
      ],
    }),
  },
  {
    name: '_entities by their other keys, five types',
    subgraph: true,
    query: () => `query ($r: [_Any!]!) { _entities(representations: $r) { __typename
      ... on Company { name } ... on Investor { type } ... on FundingEvent { round }
      ... on ExecMove { role } ... on Acquisition { dealAmountUsd } } }`,
    variables: (k) => ({
      r: [
        { __typename: 'Company', domain: k.company.domain },
        { __typename: 'Investor', uuid: k.investor.uuid, name: k.investor.name },
        {
          __typename: 'FundingEvent',
          uuid: k.fundingEvent.uuid,
          company: { uuid: k.fundingEvent.company.uuid },
        },
        { __typename: 'ExecMove', uuid: k.execMove.uuid, person: { uuid: k.execMove.person.uuid } },
        {
          __typename: 'Acquisition',
          uuid: k.acquisition.uuid,
          acquirer: { uuid: k.acquisition.acquirer.uuid },
        },
      ],
    }),
  },
];

describe('the estimate fits what users ask', () => {
  it(`has at least 15 realistic operations (${rows.length})`, () => {
    expect(rows.length).toBeGreaterThanOrEqual(15);
  });

  it(`each is estimated at most ${FIT} x what it is charged, and charged at most its budget`, async () => {
    const table: { name: string; estimate: number; charged: number; budget: number }[] = [];
    const problems: string[] = [];
    for (const row of rows) {
      stack.sandbox.reset();
      const variables = row.variables?.(known) ?? {};
      const response = row.subgraph
        ? await subgraph(row.query(known), variables)
        : await stack.gql(row.query(known), variables);
      const { estimate, used, budget } = response.extensions!.credits as Record<string, number>;
      const charged = spentOn(stack.sandbox).credits;
      table.push({ name: row.name, estimate: estimate!, charged, budget: budget! });
      if (response.errors) problems.push(`${row.name}: ${JSON.stringify(response.errors)}`);
      if (used !== charged) problems.push(`${row.name}: reports ${used}, charged ${charged}`);
      if (charged === 0) problems.push(`${row.name}: charged nothing`);
      if (estimate! > FIT * charged) problems.push(`${row.name}: estimate above ${FIT} x charged`);
      if (charged > budget!) problems.push(`${row.name}: charged above its budget`);
    }
    console.log(
      [
        'estimate vs charged (credits):',
        ...table.map(
          (r) =>
            `  ${r.name.padEnd(62)} ${String(r.estimate).padStart(5)} ${String(r.charged).padStart(5)}`,
        ),
      ].join('\n'),
    );
    expect(problems).toEqual([]);
  });
});

describe("a round's investor details under the default budget", () => {
  it('ten rounds fit (no X-Credit-Budget), and the answer is what the service has', async () => {
    const response = await stack.gql(
      `{ fundingEvents(first: 10) { nodes { investors { name type domain } } } }`,
    );
    expect(response.errors).toBeUndefined();
    const { estimate, budget, used } = response.extensions!.credits as Record<string, number>;
    expect(budget).toBe(1000);
    expect(estimate).toBeLessThanOrEqual(budget!);
    expect(used).toBeLessThanOrEqual(budget!);

    const events = (await stack.rest('funding-events?limit=10')).data as {
      investors: { id: string; name: string }[] | null;
    }[];
    const expected = [];
    for (const event of events) {
      const investors = [];
      for (const ref of event.investors ?? []) investors.push(await restInvestor(ref));
      expected.push({ investors: event.investors ? investors : null });
    }
    expect(response.data.fundingEvents.nodes).toEqual(expected);
    expect(expected.flatMap((e) => e.investors ?? []).length).toBeGreaterThan(10);
  });
});

/** The investor `ref` names, read from the service's name search (paged to the end if need be). */
async function restInvestor(ref: { id: string; name: string }) {
  let cursor: string | null = null;
  do {
    const page: any = await stack.rest(
      `investors?search=${encodeURIComponent(ref.name)}&limit=100${cursor ? `&cursor=${cursor}` : ''}`,
    );
    const record = page.data.find((i: { id: string }) => i.id === ref.id);
    if (record) return { name: record.name, type: record.type, domain: record.domain };
    cursor = page.pagination.hasMore ? page.pagination.nextCursor : null;
  } while (cursor);
  throw new Error(`investor ${ref.id} not found by its name`);
}
