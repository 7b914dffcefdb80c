import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { formatLocalId } from '../../src/nodes/global-id.js';
import { startStack, type GraphQLResponse, type Stack } from '../helpers/start-stack.js';

let stack: Stack;
/** Ids the gateway issued, from one funding event with investors. */
let issued: { event: string; company: string; investor: string; person: string };
/** The investor's name, as the service has it. */
let investorName: string;

beforeAll(async () => {
  stack = await startStack();
  const listed = await stack.gql(`{
    fundingEvents(first: 20) { nodes { id company { id } investors { id name } } }
    execMoves(first: 1) { nodes { person { id } } }
  }`);
  const event = listed.data.fundingEvents.nodes.find((e: any) => e.investors.length > 0);
  issued = {
    event: event.id,
    company: event.company.id,
    investor: event.investors[0].id,
    person: listed.data.execMoves.nodes[0].person.id,
  };
  investorName = event.investors[0].name;
});
afterAll(() => stack?.close());
beforeEach(() => stack.sandbox.reset());

const b64 = (text: string) => Buffer.from(text).toString('base64url');
const unb64 = (text: string) => Buffer.from(text, 'base64url').toString('utf8');

/** The ways a caller can make up an id from one the gateway issued (`Type:uuid|hints.mac`). */
function forgeries(id: string): Record<string, string> {
  const [encoded, mac] = id.split('.') as [string, string];
  const text = unb64(encoded);
  const uuid = text.slice(text.indexOf(':') + 1, text.indexOf('|'));
  const typename = text.slice(0, text.indexOf(':'));
  return {
    'written by hand, unsigned': b64(`${typename}:${formatLocalId(uuid, 'Capital')}`),
    'a hint altered, signature kept': `${b64(`${text}x`)}.${mac}`,
    'the signature altered': `${encoded}.${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`,
    'the signature truncated': `${encoded}.${mac.slice(0, 12)}`,
    'the signature stripped': encoded,
  };
}

/** The response refused the id in `argument`, and nothing was asked of the service. */
function expectRefusedForFree(response: GraphQLResponse, argument: string) {
  expect(response.errors).toHaveLength(1);
  expect(response.errors![0]).toMatchObject({
    message: expect.stringContaining(
      'is not an id this gateway issued (altered, or signed with another CURSOR_SECRET)',
    ),
    extensions: { code: 'INVALID_INPUT', argument },
  });
  expect(response.extensions).toMatchObject({ credits: { used: 0 }, upstreamRequests: 0 });
  expect(stack.sandbox.requestLog()).toEqual([]);
}

describe('ids the gateway issued', () => {
  it('are signed when they carry hints, and left as they were when they do not', () => {
    for (const id of [issued.event, issued.company, issued.investor]) {
      expect(id).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{16}$/);
    }
    expect(issued.person).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(unb64(issued.person)).toMatch(/^Person:[0-9a-f-]{36}$/);
  });

  it('refetch through node, nodes, company and investor', async () => {
    const response = await stack.gql(
      `query ($event: ID!, $ids: [ID!]!, $company: ID!, $investor: ID!) {
        node(id: $event) { id }
        nodes(ids: $ids) { id }
        company(id: $company) { id }
        investor(id: $investor) { id name }
      }`,
      { ...issued, ids: [issued.company, issued.investor, issued.person] },
    );
    expect(response.errors).toBeUndefined();
    expect(response.data).toEqual({
      node: { id: issued.event },
      nodes: [{ id: issued.company }, { id: issued.investor }, { id: issued.person }],
      company: { id: issued.company },
      investor: { id: issued.investor, name: investorName },
    });
  });
});

describe('a forged or altered id answers INVALID_INPUT, with no request and no credit', () => {
  const cases = () =>
    Object.entries({ Investor: issued.investor, Company: issued.company }).flatMap(
      ([typename, id]) =>
        Object.entries(forgeries(id)).map(([how, forged]) => ({ typename, how, forged })),
    );

  it('through node(id:)', async () => {
    for (const { how, forged } of cases()) {
      stack.sandbox.reset();
      const response = await stack.gql(`query ($id: ID!) { node(id: $id) { id } }`, {
        id: forged,
      });
      expect(response.data, how).toEqual({ node: null });
      expectRefusedForFree(response, 'id');
    }
  });

  it('through nodes(ids:), even next to ids the gateway issued', async () => {
    for (const { how, forged } of cases()) {
      stack.sandbox.reset();
      const response = await stack.gql(`query ($ids: [ID!]!) { nodes(ids: $ids) { id } }`, {
        ids: [issued.event, forged],
      });
      expect(response.data, how).toBeNull();
      expectRefusedForFree(response, 'ids');
    }
  });

  it('through investor(id:), company(id:) and a companyId filter', async () => {
    for (const { typename, how, forged } of cases()) {
      const queries =
        typename === 'Investor'
          ? [`query ($id: ID!) { investor(id: $id) { uuid } }`]
          : [
              `query ($id: ID!) { company(id: $id) { uuid } }`,
              `query ($id: ID!) { fundingEvents(companyId: $id) { nodes { uuid } } }`,
            ];
      for (const query of queries) {
        stack.sandbox.reset();
        const response = await stack.gql(query, { id: forged });
        expect(Object.values(response.data ?? {}), `${how}: ${query}`).toEqual([null]);
        expectRefusedForFree(response, query.includes('companyId') ? 'companyId' : 'id');
      }
    }
  });

  it('the 56 made-up investor ids of a credit-draining query cost nothing', async () => {
    const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
    const ids = Array.from({ length: 56 }, (_, n) => b64(`Investor:${uuid(n)}|a`));
    const response = await stack.gql(`query ($ids: [ID!]!) { nodes(ids: $ids) { id } }`, { ids });
    expectRefusedForFree(response, 'ids');
  });
});

describe('another CURSOR_SECRET', () => {
  let other: Stack;
  beforeAll(async () => {
    other = await startStack({ config: { cursorSecret: 'another-secret' } });
  });
  afterAll(() => other?.close());

  it('refuses the ids issued under the first, and takes those without hints', async () => {
    other.sandbox.reset();
    const refused = await other.gql(`query ($id: ID!) { investor(id: $id) { uuid } }`, {
      id: issued.investor,
    });
    expect(refused.errors![0]).toMatchObject({
      extensions: { code: 'INVALID_INPUT', argument: 'id' },
    });
    expect(refused.extensions).toMatchObject({ credits: { used: 0 }, upstreamRequests: 0 });
    expect(other.sandbox.requestLog()).toEqual([]);
    const person = await other.gql(`query ($id: ID!) { node(id: $id) { id } }`, {
      id: issued.person,
    });
    expect(person.errors).toBeUndefined();
    expect(person.data.node).toEqual({ id: issued.person });
  });
});
