import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config.js';
import { encodeGlobalId, formatLocalId } from '../../src/nodes/global-id.js';
import { startStack, type Stack, spentOn, NO_CACHE } from '../helpers/start-stack.js';

let stack: Stack;
beforeAll(async () => {
  // Counts upstream requests and credits: every operation asks for fresh pages.
  stack = await startStack({ headers: NO_CACHE });
});
afterAll(() => stack?.close());
beforeEach(() => stack.sandbox.reset());

/** Upstream requests and credits the sandbox saw since the last reset. */
const spent = () => spentOn(stack.sandbox);

/** Records the REST service returns for a query (the ground truth for expected costs). */
async function restCount(path: string) {
  const page = await stack.rest(path);
  return page.data.length as number;
}

function uniq<T>(values: T[]) {
  return [...new Set(values)];
}

describe('fewest upstream calls: exact requests and credits', () => {
  it('20 funding events, each company with its 3 latest executive moves: one request per distinct company', async () => {
    const response = await stack.gql(`{
      fundingEvents(first: 20) { nodes { uuid company { uuid execMoves(first: 3) { nodes { uuid } } } } }
    }`);
    expect(response.errors).toBeUndefined();
    const companies = uniq(
      response.data.fundingEvents.nodes.map((n: any) => n.company.uuid as string),
    );
    let moves = 0;
    for (const company of companies)
      moves += await restCount(`exec-moves?companyId=${company}&limit=3`);
    const expected = { requests: 1 + companies.length, credits: 20 + moves };
    expect({
      requests: response.extensions!.upstreamRequests,
      credits: response.extensions!.credits.used,
    }).toEqual(expected);
    stack.sandbox.reset();
    await stack.gql(
      `{ fundingEvents(first: 20) { nodes { company { execMoves(first: 3) { nodes { uuid } } } } } }`,
    );
    expect(spent()).toEqual(expected);
  });

  it('the same company under several events is asked for once', async () => {
    const counts = new Map<string, number>();
    for (const event of stack.sandbox.data.fundingEvents) {
      counts.set(event.company.id, (counts.get(event.company.id) ?? 0) + 1);
    }
    const [companyId] = [...counts].find(([, n]) => n >= 3)!;
    const response = await stack.gql(`{
      fundingEvents(companyId: "${companyId}", first: 3) { nodes { company { uuid execMoves(first: 3) { nodes { uuid } } } } }
    }`);
    const cost = spent();
    const nodes = response.data.fundingEvents.nodes;
    expect(nodes).toHaveLength(3);
    expect(uniq(nodes.map((n: any) => n.company.uuid))).toEqual([companyId]);
    const moves = await restCount(`exec-moves?companyId=${companyId}&limit=3`);
    expect(cost).toEqual({ requests: 2, credits: 3 + moves });
  });

  it("a company's funding events with investor details: one lookup per distinct investor", async () => {
    const { fundingEvents, investors } = stack.sandbox.data;
    // A company whose rounds have investors that a name search finds first (the usual case).
    let chosen: { domain: string; events: number; investors: string[] } | undefined;
    for (const event of fundingEvents) {
      const rounds = fundingEvents.filter((e) => e.company.id === event.company.id);
      const names = uniq(
        rounds
          .slice(0, 0)
          .concat(rounds)
          .flatMap((e) => e.investors.map((i) => i.id)),
      );
      if (rounds.length < 2 || names.length < 2 || names.length > 8) continue;
      let unique = true;
      for (const id of names) {
        const name = investors.find((i) => i.id === id)!.name;
        const first = await stack.rest(`investors?search=${encodeURIComponent(name)}&limit=1`);
        if (first.data[0]?.id !== id) unique = false;
      }
      if (unique) {
        chosen = { domain: event.company.domain, events: rounds.length, investors: names };
        break;
      }
    }
    expect(chosen, 'a company with rounds and findable investors').toBeDefined();
    stack.sandbox.reset();
    // Fits the default budget: 1 + 5 + 5 rounds x 3 investors assumed x 1 credit each = 21.
    const response = await stack.gql(
      `{
        company(domain: "${chosen!.domain}") {
          fundingEvents(first: 5) { nodes { investors { uuid name type domain hqCountry { code } } } }
        }
      }`,
    );
    expect(response.errors).toBeUndefined();
    const shown = response.data.company.fundingEvents.nodes.flatMap((n: any) => n.investors);
    for (const investor of shown) {
      const record = investors.find((i) => i.id === investor.uuid)!;
      expect(investor).toEqual({
        uuid: record.id,
        name: record.name,
        type: record.type,
        domain: record.domain,
        hqCountry: record.hqCountry ? { code: record.hqCountry.code } : null,
      });
    }
    const distinct = chosen!.investors.length;
    expect(spent()).toEqual({ requests: 2 + distinct, credits: 1 + chosen!.events + distinct });
    expect(response.extensions).toMatchObject({
      credits: { used: 1 + chosen!.events + distinct },
      upstreamRequests: 2 + distinct,
    });
  });

  it('investor id, uuid and name under a funding event cost nothing extra', async () => {
    await stack.gql(`{ fundingEvents(first: 20) { nodes { investors { id uuid name } } } }`);
    expect(spent()).toEqual({ requests: 1, credits: 20 });
  });

  it('the same sub-selection repeated under aliases is fetched once', async () => {
    const response = await stack.gql(`{
      a: fundingEvents(first: 5, round: ["seed"]) { nodes { uuid } }
      b: fundingEvents(first: 5, round: ["seed"]) { nodes { uuid round company { name } } }
      c: fundingEvents(round: ["seed"], first: 5) { edges { node { uuid } } }
    }`);
    expect(response.data.a.nodes).toEqual(response.data.c.edges.map((e: any) => e.node));
    expect(spent()).toEqual({ requests: 1, credits: 5 });
    expect(response.extensions).toMatchObject({ credits: { used: 5 }, upstreamRequests: 1 });
  });

  it('20 companies each with their 3 latest funding rounds: one request per company, concurrently', async () => {
    const response = await stack.gql(`{
      companies(first: 20) { nodes { uuid fundingEvents(first: 3) { nodes { uuid round } } } }
    }`);
    const companies = response.data.companies.nodes;
    let rounds = 0;
    for (const company of companies) {
      const expected = await stack.rest(`funding-events?companyId=${company.uuid}&limit=3`);
      expect(company.fundingEvents.nodes.map((n: any) => n.uuid)).toEqual(
        expected.data.map((r: any) => r.id),
      );
      rounds += expected.data.length;
    }
    expect(response.extensions).toMatchObject({
      credits: { used: 20 + rounds },
      upstreamRequests: 21,
    });
  });

  it('nodes over ids of every type: one request and one credit per id', async () => {
    const listed = await stack.gql(`{
      fundingEvents(first: 1) { nodes { id uuid round company { id uuid name } investors { id uuid name } } }
      execMoves(first: 1) { nodes { id uuid role person { id uuid name } } }
      acquisitions(first: 1) { nodes { id uuid dealAmountUsdCents } }
    }`);
    const event = listed.data.fundingEvents.nodes[0];
    const move = listed.data.execMoves.nodes[0];
    const deal = listed.data.acquisitions.nodes[0];
    const investor = event.investors[0] ?? null;
    const ids = [
      event.id,
      event.company.id,
      move.id,
      move.person.id,
      deal.id,
      ...(investor ? [investor.id] : []),
    ];
    stack.sandbox.reset();
    const response = await stack.gql(
      `query ($ids: [ID!]!) { nodes(ids: $ids) {
        __typename id
        ... on FundingEvent { uuid round }
        ... on Company { uuid name }
        ... on ExecMove { uuid role }
        ... on Person { uuid name }
        ... on Acquisition { uuid dealAmountUsdCents }
        ... on Investor { uuid name }
      } }`,
      { ids },
    );
    expect(response.errors).toBeUndefined();
    expect(response.data.nodes).toEqual([
      { __typename: 'FundingEvent', id: event.id, uuid: event.uuid, round: event.round },
      { __typename: 'Company', ...event.company },
      { __typename: 'ExecMove', id: move.id, uuid: move.uuid, role: move.role },
      { __typename: 'Person', ...move.person },
      { __typename: 'Acquisition', ...deal },
      ...(investor ? [{ __typename: 'Investor', ...investor }] : []),
    ]);
    expect(spent()).toEqual({ requests: ids.length, credits: ids.length });
  });

  it('every id the gateway hands out refetches through node, deep in the lists too', async () => {
    const listed = await stack.gql(`{
      fundingEvents(first: 40, after: null) { nodes { id uuid company { id uuid } investors { id uuid } } }
      execMoves(first: 40) { nodes { id uuid person { id uuid } company { id uuid } } }
      acquisitions(first: 40) { nodes { id uuid acquirer { id uuid } target { id uuid } } }
    }`);
    const picks = (nodes: any[]) => [nodes[7], nodes[23], nodes[39]];
    const expected = new Map<string, string>();
    for (const e of picks(listed.data.fundingEvents.nodes)) {
      expected.set(e.id, e.uuid).set(e.company.id, e.company.uuid);
      for (const i of e.investors) expected.set(i.id, i.uuid);
    }
    for (const m of picks(listed.data.execMoves.nodes)) {
      expected.set(m.id, m.uuid).set(m.person.id, m.person.uuid).set(m.company.id, m.company.uuid);
    }
    for (const a of picks(listed.data.acquisitions.nodes)) {
      expected
        .set(a.id, a.uuid)
        .set(a.acquirer.id, a.acquirer.uuid)
        .set(a.target.id, a.target.uuid);
    }
    const ids = [...expected.keys()];
    const response = await stack.gql(
      `query ($ids: [ID!]!) { nodes(ids: $ids) { id ... on Company { uuid } ... on Person { uuid }
        ... on Investor { uuid } ... on ExecMove { uuid } ... on FundingEvent { uuid } ... on Acquisition { uuid } } }`,
      // Fits the default budget: each id is counted at its assumed cost, 1 credit.
      { ids },
    );
    expect(response.errors).toBeUndefined();
    expect(response.data.nodes.map((n: any) => n && [n.id, n.uuid])).toEqual(
      ids.map((id) => [id, expected.get(id)]),
    );
  });

  it('a record already fetched in the operation is not fetched again by id', async () => {
    const first = await stack.gql(`{ fundingEvents(first: 5) { nodes { company { id } } } }`);
    const companyId = first.data.fundingEvents.nodes[2].company.id;
    stack.sandbox.reset();
    const response = await stack.gql(
      `query ($id: ID!) { fundingEvents(first: 5) { nodes { uuid } } node(id: $id) { id } }`,
      { id: companyId },
    );
    expect(response.data.node).toEqual({ id: companyId });
    expect(spent()).toEqual({ requests: 1, credits: 5 });
  });
});

describe('edges of the graph', () => {
  it('walks move → person → their moves, and deal → acquirer → its deals', async () => {
    const response = await stack.gql(`{
      execMoves(first: 1) { nodes { uuid person { uuid execMoves(first: 5) { nodes { uuid person { uuid } } } } } }
      acquisitions(first: 1) { nodes { uuid acquirer { uuid acquisitions(first: 10) { nodes { uuid acquirer { uuid } target { uuid } } } } } }
    }`);
    expect(response.errors).toBeUndefined();
    const move = response.data.execMoves.nodes[0];
    expect(move.person.execMoves.nodes.map((n: any) => n.uuid)).toContain(move.uuid);
    for (const n of move.person.execMoves.nodes) expect(n.person.uuid).toBe(move.person.uuid);
    const deal = response.data.acquisitions.nodes[0];
    expect(deal.acquirer.acquisitions.nodes.map((n: any) => n.uuid)).toContain(deal.uuid);
  });

  it('a nested connection pages through `after` with its own filters', async () => {
    const counts = new Map<string, number>();
    for (const move of stack.sandbox.data.execMoves)
      counts.set(move.company.id, (counts.get(move.company.id) ?? 0) + 1);
    const [companyId, total] = [...counts].sort((a, b) => b[1] - a[1])[0]!;
    const uuids: string[] = [];
    let after: string | null = null;
    for (let i = 0; i < 50; i++) {
      const response: any = await stack.gql(
        `query ($after: String) { company(uuid: "${companyId}") { execMoves(first: 2, after: $after) { nodes { uuid } pageInfo { hasNextPage endCursor } } } }`,
        { after },
      );
      const connection = response.data.company.execMoves;
      uuids.push(...connection.nodes.map((n: any) => n.uuid));
      if (!connection.pageInfo.hasNextPage) break;
      after = connection.pageInfo.endCursor;
    }
    const rest = await stack.rest(`exec-moves?companyId=${companyId}&limit=100`);
    expect(uuids).toEqual(rest.data.map((r: any) => r.id));
    expect(uuids.length).toBeLessThanOrEqual(total);
  });
});

describe('lookups by id', () => {
  it('company, investor and person by their keys; null when nothing matches', async () => {
    const company = stack.sandbox.data.companies[5]!;
    const investor = stack.sandbox.data.investors.find((i) => i.domain)!;
    const person = stack.sandbox.data.execMoves[0]!.person;
    const response = await stack.gql(`{
      byDomain: company(domain: "${company.domain}") { uuid name }
      investor(domain: "${investor.domain}") { uuid name type }
      person(uuid: "${person.id}") { uuid name linkedinUrl }
      missing: company(domain: "no-such-company.example") { uuid }
    }`);
    expect(response.errors).toBeUndefined();
    expect(response.data).toEqual({
      byDomain: { uuid: company.id, name: company.name },
      investor: { uuid: investor.id, name: investor.name, type: investor.type },
      person: { uuid: person.id, name: person.name, linkedinUrl: person.linkedinUrl },
      missing: null,
    });
    expect(spent()).toEqual({ requests: 4, credits: 3 });
  });

  it('a company by bare uuid is read from its newest event, at most three requests', async () => {
    const event = stack.sandbox.data.fundingEvents[0]!;
    const response = await stack.gql(`{ company(uuid: "${event.company.id}") { uuid domain } }`);
    expect(response.data.company).toEqual({ uuid: event.company.id, domain: event.company.domain });
    expect(spent()).toEqual({ requests: 1, credits: 1 });
  });

  it('a well-formed id that matches nothing is null; a malformed one is INVALID_INPUT', async () => {
    const ghost = encodeGlobalId(
      'Company',
      formatLocalId('0b6f3c52-8d1e-4f0a-9a53-1c2d3e4f5a6b', 'ghost.example'),
      defaultConfig.cursorSecret,
    );
    const found = await stack.gql(`query ($id: ID!) { node(id: $id) { id } }`, { id: ghost });
    expect(found.errors).toBeUndefined();
    expect(found.data.node).toBeNull();
    const bad = await stack.gql(`{ node(id: "definitely-not-an-id") { id } }`);
    expect(bad.errors![0]).toMatchObject({ extensions: { code: 'INVALID_INPUT' } });
    const wrongArgs = await stack.gql(`{ company { uuid } }`);
    expect(wrongArgs.errors![0]).toMatchObject({
      message: expect.stringContaining('exactly one of "id", "uuid", "domain"'),
      extensions: { code: 'INVALID_INPUT' },
    });
  });
});
