import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, killGatewayProcesses, startGatewayProcess } from '../helpers/start-process.js';
import type { GatewayProcess } from '../helpers/start-process.js';
import type { GraphQLResponse } from '../helpers/start-stack.js';

/**
 * The gateway as a new user starts it: `node dist/main.js` (what `npm start` runs) with none of
 * its settings set, so the page cache is on, in memory, with the default budget, in front of the
 * sandbox it starts itself. Only the ports are chosen, so that the suite runs beside others, and
 * `SANDBOX_TRICKLE_SECONDS=0`: the suite compares the newest events as GraphQL and REST give them,
 * one read after the other, and an event the sandbox adds in between would make them differ.
 * Every answer is compared with what the service's REST API gives for the same records.
 */
let gateway: GatewayProcess;
let restBase: string;
beforeAll(async () => {
  const sandboxPort = await freePort();
  gateway = await startGatewayProcess(
    { NODE_ENV: 'production', SANDBOX_PORT: String(sandboxPort), SANDBOX_TRICKLE_SECONDS: '0' },
    { dist: true },
  );
  restBase = `http://127.0.0.1:${sandboxPort}/v1`;
});
afterAll(() => killGatewayProcesses());

const KEY = 'demo-key';

async function post<D = any>(
  path: '/graphql' | '/subgraph',
  body: Record<string, unknown>,
): Promise<GraphQLResponse<D>> {
  const response = await fetch(`${gateway.origin}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': KEY },
    body: JSON.stringify(body),
  });
  return { status: response.status, ...((await response.json()) as object) };
}

const gql = <D = any>(query: string, variables?: Record<string, unknown>, operationName?: string) =>
  post<D>('/graphql', { query, variables, operationName });

async function rest(path: string): Promise<any[]> {
  const response = await fetch(`${restBase}/${path}`, { headers: { 'x-api-key': KEY } });
  const body = (await response.json()) as { data: any[] };
  return body.data;
}

/**
 * The fields read of each node type, as a tree: `true` is a field of the same name in the REST
 * record, `'id'` is `uuid` (the service's `id`), an object selects inside an embedded record.
 */
type Spec = { [field: string]: true | 'id' | Spec };

const SPECS: Record<string, Spec> = {
  Company: {
    uuid: 'id',
    name: true,
    domain: true,
    description: true,
    linkedinHandle: true,
    hqCity: true,
    hqCountry: { code: true, name: true },
    industryGroup: true,
    employeeCountBucket: true,
    foundedYear: true,
    businessModel: true,
    createdAt: true,
    updatedAt: true,
  },
  Investor: {
    uuid: 'id',
    name: true,
    type: true,
    domain: true,
    hqCountry: { code: true },
    firstSeenAt: true,
    lastSeenAt: true,
  },
  Person: { uuid: 'id', name: true, linkedinHandle: true, linkedinUrl: true },
  FundingEvent: {
    uuid: 'id',
    round: true,
    amountUsdCents: true,
    amountUsd: true,
    amountOriginalCurrency: true,
    announcedAt: true,
    discoveredAt: true,
    company: { uuid: 'id', name: true },
    investors: { uuid: 'id', name: true },
  },
  ExecMove: {
    uuid: 'id',
    role: true,
    roleSeniority: true,
    moveType: true,
    announcedAt: true,
    discoveredAt: true,
    person: { uuid: 'id', name: true },
    company: { uuid: 'id' },
  },
  Acquisition: {
    uuid: 'id',
    dealAmountUsdCents: true,
    paymentType: true,
    isMerger: true,
    announcedAt: true,
    discoveredAt: true,
    acquirer: { uuid: 'id', name: true },
    target: { uuid: 'id' },
  },
};

/** The GraphQL selection of a spec. */
function selection(spec: Spec): string {
  return Object.entries(spec)
    .map(([field, sub]) => (typeof sub === 'object' ? `${field} { ${selection(sub)} }` : field))
    .join(' ');
}

/** What the gateway must answer for a REST record, read through a spec. */
function project(record: any, spec: Spec): any {
  if (record === null || record === undefined) return null;
  if (Array.isArray(record)) return record.map((item) => project(item, spec));
  const out: Record<string, unknown> = {};
  for (const [field, sub] of Object.entries(spec)) {
    const value = record[sub === 'id' ? 'id' : field];
    out[field] = typeof sub === 'object' ? project(value, sub) : (value ?? null);
  }
  return out;
}

/** A fragment per node type: `... on Company { uuid name ... }`. */
const ON_EVERY_TYPE = Object.entries(SPECS)
  .map(([typename, spec]) => `... on ${typename} { ${selection(spec)} }`)
  .join(' ');

/** One record of each node type, with its global id and its REST record. */
let samples: { typename: string; id: string; record: any }[];
beforeAll(async () => {
  const { data, errors } = await gql(`{
    companies(first: 2) { nodes { id } }
    investors(first: 2) { nodes { id } }
    fundingEvents(first: 2) { nodes { id } }
    execMoves(first: 2) { nodes { id person { id } } }
    acquisitions(first: 2) { nodes { id } }
  }`);
  expect(errors).toBeUndefined();
  const [companies, investors, fundingEvents, execMoves, acquisitions] = await Promise.all([
    rest('companies?limit=2'),
    rest('investors?limit=2'),
    rest('funding-events?limit=2'),
    rest('exec-moves?limit=2'),
    rest('acquisitions?limit=2'),
  ]);
  samples = [0, 1].flatMap((i) => [
    { typename: 'Company', id: data.companies.nodes[i].id, record: companies[i] },
    { typename: 'Investor', id: data.investors.nodes[i].id, record: investors[i] },
    { typename: 'FundingEvent', id: data.fundingEvents.nodes[i].id, record: fundingEvents[i] },
    { typename: 'ExecMove', id: data.execMoves.nodes[i].id, record: execMoves[i] },
    { typename: 'Person', id: data.execMoves.nodes[i].person.id, record: execMoves[i].person },
    { typename: 'Acquisition', id: data.acquisitions.nodes[i].id, record: acquisitions[i] },
  ]);
});

const expected = ({ typename, id, record }: (typeof samples)[number]) => ({
  __typename: typename,
  id,
  ...project(record, SPECS[typename]!),
});

describe('npm start with its defaults (page cache on, default budget)', () => {
  it("refetches every node type by node(id:), as Relay's @refetchable does, then again from the cache", async () => {
    const refetch = `query Refetch($id: ID!) { node(id: $id) { __typename id ${ON_EVERY_TYPE} } }`;
    for (const sample of samples) {
      const first = await gql(refetch, { id: sample.id });
      expect(first.errors, sample.typename).toBeUndefined();
      expect(first.data.node).toEqual(expected(sample));

      const again = await gql(refetch, { id: sample.id });
      expect(again.errors).toBeUndefined();
      expect(again.data).toEqual(first.data);
      expect(again.extensions).toMatchObject({ credits: { used: 0 }, upstreamRequests: 0 });
    }
  });

  it('nodes(ids:) answers every type, in the order asked', async () => {
    const ids = [...samples].reverse().map((sample) => sample.id);
    const response = await gql(
      `query Many($ids: [ID!]!) { nodes(ids: $ids) { __typename id ${ON_EVERY_TYPE} } }`,
      { ids },
    );
    expect(response.errors).toBeUndefined();
    expect(response.data.nodes).toEqual([...samples].reverse().map(expected));
  });

  it('_entities finds every type by each of its keys, as a federation router asks', async () => {
    const representations: Record<string, unknown>[] = [];
    const wanted: unknown[] = [];
    for (const sample of samples.slice(0, 6)) {
      const { typename, id, record } = sample;
      const keys: Record<string, unknown>[] = [{ id }];
      if (typename === 'Company') keys.push({ uuid: record.id }, { domain: record.domain });
      if (typename === 'Investor') {
        keys.push({ uuid: record.id, name: record.name }, { domain: record.domain });
      }
      if (typename === 'Person') keys.push({ uuid: record.id });
      if (typename === 'FundingEvent') {
        keys.push({ uuid: record.id, company: { uuid: record.company.id } });
      }
      if (typename === 'ExecMove') {
        keys.push({ uuid: record.id, person: { uuid: record.person.id } });
      }
      if (typename === 'Acquisition') {
        keys.push(
          { uuid: record.id, acquirer: { uuid: record.acquirer.id } },
          { uuid: record.id, target: { uuid: record.target.id } },
        );
      }
      for (const key of keys) {
        representations.push({ __typename: typename, ...key });
        wanted.push(expected(sample));
      }
    }
    expect(representations.length).toBeGreaterThanOrEqual(14);
    const response = await post('/subgraph', {
      query: `query Entities($representations: [_Any!]!) {
        _entities(representations: $representations) { __typename ... on Node { id } ${ON_EVERY_TYPE} }
      }`,
      variables: { representations },
    });
    expect(response.errors).toBeUndefined();
    expect(response.data._entities).toEqual(wanted);
  });

  it('shows investor details under ten funding rounds within the default budget', async () => {
    const response = await gql(
      `{ fundingEvents(first: 10) { nodes { uuid investors { uuid name type domain } } } }`,
    );
    expect(response.errors).toBeUndefined();
    const events = await rest('funding-events?limit=10');
    const named = new Set(events.flatMap((event) => event.investors.map((i: any) => i.name)));
    const directory = new Map<string, any>();
    for (const name of named) {
      for (const investor of await rest(`investors?search=${encodeURIComponent(name)}&limit=100`)) {
        directory.set(investor.id, investor);
      }
    }
    expect(response.data.fundingEvents.nodes).toEqual(
      events.map((event) => ({
        uuid: event.id,
        investors: event.investors.map((ref: any) => {
          const investor = directory.get(ref.id);
          return { uuid: ref.id, name: ref.name, type: investor.type, domain: investor.domain };
        }),
      })),
    );
    expect(events.some((event) => event.investors.length > 0)).toBe(true);
  });

  it('runs the operation each request names in a document of several', async () => {
    const document = `
      query Rounds { fundingEvents(first: 2) { nodes { uuid round } } }
      query Directory { companies(first: 3) { nodes { uuid name } } }
      query Nothing { __typename }`;
    const [events, companies] = await Promise.all([
      rest('funding-events?limit=2'),
      rest('companies?limit=3'),
    ]);
    const answers: Record<string, unknown> = {
      Nothing: { __typename: 'Query' },
      Rounds: { fundingEvents: { nodes: events.map((e) => ({ uuid: e.id, round: e.round })) } },
      Directory: { companies: { nodes: companies.map((c) => ({ uuid: c.id, name: c.name })) } },
    };
    for (const name of ['Nothing', 'Rounds', 'Directory', 'Rounds', 'Nothing', 'Directory']) {
      const response = await gql(document, undefined, name);
      expect(response.errors, name).toBeUndefined();
      expect(response.data, name).toEqual(answers[name]);
    }
  });
});
