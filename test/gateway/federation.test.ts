import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  NO_CACHE,
  spentOn,
  startStack,
  type GraphQLResponse,
  type Stack,
} from '../helpers/start-stack.js';

let stack: Stack;

beforeAll(async () => {
  // Compares upstream requests and credits with the sandbox's log: fresh pages every time.
  stack = await startStack({ headers: NO_CACHE });
});
afterAll(() => stack?.close());
beforeEach(() => stack.sandbox.reset());

/** POSTs to the subgraph endpoint, as a federation router does. */
async function subgraph<D = any>(
  query: string,
  variables?: Record<string, unknown>,
  { key = stack.sandbox.keys.demo as string | null, headers = {} as Record<string, string> } = {},
): Promise<GraphQLResponse<D>> {
  const response = await fetch(`${stack.origin}/subgraph`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(key === null ? {} : { 'x-api-key': key }),
      ...NO_CACHE,
      ...headers,
    },
    body: JSON.stringify({ query, variables }),
  });
  return { status: response.status, ...((await response.json()) as object) };
}

const ENTITIES = `query Entities($representations: [_Any!]!) {
  _entities(representations: $representations) {
    __typename
    ... on Company { uuid name domain }
    ... on Investor { uuid name type }
    ... on Person { uuid name }
    ... on FundingEvent { uuid round amountUsdCents company { uuid } }
    ... on ExecMove { uuid role person { uuid } }
    ... on Acquisition { uuid acquirer { uuid } target { uuid } }
  }
}`;

describe('the subgraph SDL', () => {
  it('is what _service { sdl } answers, and subgraph.graphql holds it', async () => {
    const response = await subgraph('{ _service { sdl } }');
    const sdl: string = response.data._service.sdl;
    expect(`${sdl}\n`).toBe(
      readFileSync(new URL('../../subgraph.graphql', import.meta.url), 'utf8'),
    );
    expect(sdl).toContain('@link(url: "https://specs.apollo.dev/federation/v2.9"');
    for (const key of [
      'type Company implements Node\n  @key(fields: "id")\n  @key(fields: "uuid")\n  @key(fields: "domain")',
      'type Person implements Node\n  @key(fields: "id")\n  @key(fields: "uuid")',
      '@key(fields: "uuid name")',
      '@key(fields: "uuid company { uuid }")',
      '@key(fields: "uuid person { uuid }")',
      '@key(fields: "uuid acquirer { uuid }")',
    ]) {
      expect(sdl).toContain(key);
    }
    // Costs nothing, and asks nothing of the service.
    expect(response.extensions).toMatchObject({ credits: { used: 0 }, upstreamRequests: 0 });
    expect(stack.sandbox.requestLog()).toEqual([]);
  });

  it('is answered without a key: a router or rover reads it with no caller behind it', async () => {
    const response = await subgraph('{ _service { sdl } }', {}, { key: null });
    expect(response.status).toBe(200);
    expect(response.errors).toBeUndefined();
    expect(response.data._service.sdl).toContain('@key(fields: "domain")');
  });

  it('/graphql stays a plain schema: no _entities there', async () => {
    const response = await stack.gql('{ _service { sdl } }');
    expect(response.errors?.[0]?.message).toContain('Cannot query field "_service"');
  });
});

describe('_entities', () => {
  it('finds every node type by each of its keys, as the service has them, paying what the service charged', async () => {
    const event = (await stack.rest('funding-events?limit=20')).data.find(
      (e: any) => e.investors.length > 0 && e.company,
    );
    const move = (await stack.rest('exec-moves?limit=1')).data[0];
    const deal = (await stack.rest('acquisitions?limit=20')).data.find((a: any) => a.acquirer);
    const investor = (
      await stack.rest(`investors?search=${encodeURIComponent(event.investors[0].name)}&limit=5`)
    ).data.find((i: any) => i.id === event.investors[0].id);
    stack.sandbox.reset();

    const representations = [
      { __typename: 'Company', uuid: event.company.id },
      { __typename: 'Company', domain: event.company.domain },
      { __typename: 'Investor', uuid: investor.id, name: investor.name },
      { __typename: 'Investor', domain: investor.domain },
      { __typename: 'Person', uuid: move.person.id },
      { __typename: 'FundingEvent', uuid: event.id, company: { uuid: event.company.id } },
      { __typename: 'ExecMove', uuid: move.id, person: { uuid: move.person.id } },
      { __typename: 'Acquisition', uuid: deal.id, acquirer: { uuid: deal.acquirer.id } },
    ];
    const response = await subgraph(ENTITIES, { representations });

    expect(response.errors).toBeUndefined();
    const company = {
      __typename: 'Company',
      uuid: event.company.id,
      name: event.company.name,
      domain: event.company.domain,
    };
    const investorEntity = {
      __typename: 'Investor',
      uuid: investor.id,
      name: investor.name,
      type: investor.type,
    };
    expect(response.data._entities).toEqual([
      company,
      company,
      investorEntity,
      investorEntity,
      { __typename: 'Person', uuid: move.person.id, name: move.person.name },
      {
        __typename: 'FundingEvent',
        uuid: event.id,
        round: event.round,
        amountUsdCents: event.amountUsdCents,
        company: { uuid: event.company.id },
      },
      { __typename: 'ExecMove', uuid: move.id, role: move.role, person: { uuid: move.person.id } },
      {
        __typename: 'Acquisition',
        uuid: deal.id,
        acquirer: { uuid: deal.acquirer.id },
        target: deal.target ? { uuid: deal.target.id } : null,
      },
    ]);
    const spent = spentOn(stack.sandbox);
    expect(response.extensions).toMatchObject({
      credits: { used: spent.credits },
      upstreamRequests: spent.requests,
    });
    // Each lookup is one small page at most; the company by uuid and its round share one.
    expect(spent.requests).toBeLessThanOrEqual(representations.length);
    expect(spent.credits).toBeLessThanOrEqual(representations.length);
  });

  it('finds by the Relay id too, and batches and dedupes like node(id:)', async () => {
    const listed = await stack.gql(
      '{ fundingEvents(first: 5) { nodes { id uuid company { id uuid } } } }',
    );
    const events = listed.data.fundingEvents.nodes as any[];
    stack.sandbox.reset();

    const representations = [
      ...events.map((e) => ({ __typename: 'FundingEvent', id: e.id })),
      ...events.map((e) => ({ __typename: 'Company', id: e.company.id })),
      // The same company again, by another key: looked up once.
      { __typename: 'Company', uuid: events[0].company.uuid },
    ];
    const response = await subgraph(ENTITIES, { representations });
    expect(response.errors).toBeUndefined();
    expect(response.data._entities.map((e: any) => e.uuid)).toEqual([
      ...events.map((e) => e.uuid),
      ...events.map((e) => e.company.uuid),
      events[0].company.uuid,
    ]);

    // Through /graphql, the same records by nodes(ids:) cost the same requests and credits.
    const viaEntities = spentOn(stack.sandbox);
    stack.sandbox.reset();
    const viaNodes = await stack.gql(
      'query ($ids: [ID!]!) { nodes(ids: $ids) { id ... on FundingEvent { round } } }',
      { ids: [...events.map((e) => e.id), ...events.map((e) => e.company.id)] },
    );
    expect(viaNodes.errors).toBeUndefined();
    expect(spentOn(stack.sandbox)).toEqual(viaEntities);
    expect(response.extensions).toMatchObject({
      credits: { used: viaEntities.credits },
      upstreamRequests: viaEntities.requests,
    });
  });

  it('answers null for a representation that names no record, or an id of another type', async () => {
    const listed = await stack.gql('{ companies(first: 1) { nodes { id } } }');
    stack.sandbox.reset();
    const response = await subgraph(ENTITIES, {
      representations: [
        { __typename: 'Company', domain: 'no-such-company.invalid' },
        { __typename: 'FundingEvent', id: listed.data.companies.nodes[0].id },
      ],
    });
    expect(response.errors).toBeUndefined();
    expect(response.data._entities).toEqual([null, null]);
    expect(response.extensions).toMatchObject({
      upstreamRequests: spentOn(stack.sandbox).requests,
    });
    expect(spentOn(stack.sandbox).requests).toBe(1);
  });

  it('refuses a representation without any key, naming the keys, and finds the others', async () => {
    const company = (await stack.rest('companies?limit=1')).data[0];
    stack.sandbox.reset();
    const response = await subgraph(ENTITIES, {
      representations: [
        // An investor by uuid alone: the service searches investors by name only.
        { __typename: 'Investor', uuid: '00000000-0000-4000-8000-000000000000' },
        { __typename: 'Company', domain: company.domain },
      ],
    });
    expect(response.errors).toHaveLength(1);
    expect(response.errors![0]).toMatchObject({
      message:
        'Argument "representations": an entity Investor needs the fields of one of its keys ("id", "uuid name", "domain"), as strings.',
      path: ['_entities', 0],
      extensions: { code: 'INVALID_INPUT', argument: 'representations' },
    });
    expect(response.data._entities).toEqual([
      null,
      { __typename: 'Company', uuid: company.id, name: company.name, domain: company.domain },
    ]);
  });

  it.each([
    ['a type that is not an entity', { __typename: 'Country', code: 'US' }],
    ['an unknown type', { __typename: 'Spaceship', id: 'x' }],
    ['no __typename', { uuid: 'x' }],
  ])('refuses %s before anything runs', async (_what, representation) => {
    const response = await subgraph(ENTITIES, { representations: [representation] });
    expect(response.errors?.[0]).toMatchObject({
      message: expect.stringContaining(
        'item 0 must have a "__typename" naming an entity of this graph (Company, Investor, Person, FundingEvent, ExecMove, Acquisition)',
      ),
      extensions: { code: 'INVALID_INPUT', argument: 'representations' },
    });
    expect(stack.sandbox.requestLog()).toEqual([]);
  });

  it('refuses an id the gateway did not issue, naming representations, for nothing', async () => {
    const response = await subgraph(ENTITIES, {
      representations: [
        { __typename: 'Company', id: Buffer.from('Company:made-up').toString('base64url') },
      ],
    });
    expect(response.errors?.[0]?.extensions).toMatchObject({
      code: 'INVALID_INPUT',
      argument: 'representations',
    });
    expect(stack.sandbox.requestLog()).toEqual([]);
  });

  it('counts every representation in the credit estimate, and refuses past the budget before spending', async () => {
    const listed = await stack.gql('{ companies(first: 3) { nodes { domain } } }');
    stack.sandbox.reset();
    const representations = (listed.data.companies.nodes as any[]).map((c) => ({
      __typename: 'Company',
      domain: c.domain,
    }));
    const allowed = await subgraph(ENTITIES, { representations });
    // A lookup by domain costs one credit each, exactly (docs/costs.md, "What things cost").
    expect(allowed.extensions).toMatchObject({ credits: { estimate: 3, used: 3 } });
    stack.sandbox.reset();

    const refused = await subgraph(
      ENTITIES,
      { representations },
      { headers: { 'x-credit-budget': '2' } },
    );
    expect(refused.errors?.[0]?.extensions?.code).toBe('CREDIT_BUDGET_EXCEEDED');
    expect(stack.sandbox.requestLog()).toEqual([]);
  });

  it('takes the caller key as /graphql does', async () => {
    const response = await subgraph(
      ENTITIES,
      { representations: [{ __typename: 'Company', domain: 'x.invalid' }] },
      { key: null },
    );
    const plain = await stack.gql('{ company(domain: "x.invalid") { name } }', {}, { key: null });
    expect(response.errors?.[0]?.extensions?.code).toBeDefined();
    expect(response.errors?.[0]?.extensions?.code).toBe(plain.errors?.[0]?.extensions?.code);
    expect(stack.sandbox.requestLog()).toEqual([]);
  });

  it('is served over GET too', async () => {
    const url = new URL(`${stack.origin}/subgraph`);
    url.searchParams.set('query', '{ _service { sdl } }');
    const response = await fetch(url, {
      headers: { 'x-api-key': stack.sandbox.keys.demo, accept: 'application/json' },
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as any;
    expect(body.data._service.sdl).toContain('@key(fields: "id")');
  });
});
