import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { createGatewayRuntime } from '@graphql-hive/gateway-runtime';
import { composeServices } from '@theguild/federation-composition';
import { parse } from 'graphql';
import { createYoga } from 'graphql-yoga';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { spentOn, startStack, type Stack } from '../helpers/start-stack.js';

/**
 * A second subgraph, written for the test: a CRM whose accounts reference companies by domain
 * and which adds `Company.accountOwner`.
 */
const CRM_SDL = /* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.6", import: ["@key"])

  type Query {
    accounts: [Account!]!
  }

  type Account @key(fields: "id") {
    id: ID!
    tier: String!
    company: Company
  }

  type Company @key(fields: "domain") {
    domain: String
    accountOwner: String
  }
`;

interface Account {
  id: string;
  tier: string;
  domain: string;
  owner: string;
}

function crmSubgraph(accounts: Account[]) {
  const ownerOf = new Map(accounts.map((a) => [a.domain, a.owner]));
  const schema = buildSubgraphSchema({
    typeDefs: parse(CRM_SDL),
    resolvers: {
      Query: { accounts: () => accounts },
      Account: { company: (account: Account) => ({ domain: account.domain }) },
      Company: {
        __resolveReference: ({ domain }: { domain: string }) => ({ domain }),
        accountOwner: ({ domain }: { domain: string }) => ownerOf.get(domain) ?? null,
      },
    } as never,
  });
  return createYoga({ schema, graphqlEndpoint: '/graphql', logging: false });
}

async function listen(handler: Parameters<typeof createServer>[1]): Promise<Server> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

const urlOf = (server: Server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

let stack: Stack;
let crm: Server;
let accounts: Account[];
let supergraphSdl: string;
let router: ReturnType<typeof createGatewayRuntime>;

beforeAll(async () => {
  stack = await startStack();
  const companies = (await stack.rest('companies?limit=3')).data as any[];
  accounts = companies.map((c, i) => ({
    id: `acct-${i + 1}`,
    tier: i === 0 ? 'enterprise' : 'growth',
    domain: c.domain,
    owner: `owner-${i + 1}@crm.example`,
  }));
  crm = await listen(crmSubgraph(accounts));
  const ours = await fetch(`${stack.origin}/subgraph`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': stack.sandbox.keys.demo },
    body: JSON.stringify({ query: '{ _service { sdl } }' }),
  });
  const sdl = ((await ours.json()) as any).data._service.sdl as string;

  const composed = composeServices([
    { name: 'business-signals', typeDefs: parse(sdl), url: `${stack.origin}/subgraph` },
    { name: 'crm', typeDefs: parse(CRM_SDL), url: `${urlOf(crm)}/graphql` },
  ]);
  if (!composed.supergraphSdl) {
    throw new Error(composed.errors?.map((e) => e.message).join('\n') ?? 'composition failed');
  }
  supergraphSdl = composed.supergraphSdl;
  router = createGatewayRuntime({
    supergraph: supergraphSdl,
    logging: false,
    // A failure in a subgraph then reads as itself in the assertion, not "Unexpected error.".
    maskedErrors: false,
    propagateHeaders: {
      // The caller's key goes to this gateway's subgraph only.
      fromClientToSubgraphs: ({ request, subgraphName }) =>
        subgraphName === 'business-signals'
          ? { 'x-api-key': request.headers.get('x-api-key') }
          : {},
      // Every subgraph request's credits, as a list (one value per request).
      fromSubgraphsToClient: ({ response }) => ({
        'x-credits-used': response.headers.get('x-credits-used'),
      }),
    },
  });
});
afterAll(async () => {
  await router?.dispose();
  await new Promise((resolve) => crm?.close(resolve));
  await stack?.close();
});
beforeEach(() => stack.sandbox.reset());

async function viaRouter(query: string) {
  const response = await router.fetch('http://router.local/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': stack.sandbox.keys.demo },
    body: JSON.stringify({ query }),
  });
  return { headers: response.headers, body: (await response.json()) as any };
}

describe('composed with another subgraph and served by Hive Gateway', () => {
  it('composes: Company joins both subgraphs, keyed by domain', () => {
    expect(supergraphSdl).toContain('@join__type(graph: BUSINESS_SIGNALS, key: "domain")');
    expect(supergraphSdl).toContain('@join__type(graph: CRM, key: "domain")');
    expect(supergraphSdl).toMatch(/accountOwner: String @join__field\(graph: CRM\)/);
  });

  it('a query across both subgraphs: data equal to REST, credits equal to the sandbox log', async () => {
    const { headers, body } = await viaRouter(`{
      accounts {
        id
        tier
        company {
          domain
          accountOwner
          name
          hqCountry { code }
          fundingEvents(first: 2) { nodes { uuid round amountUsdCents } }
        }
      }
    }`);
    expect(body.errors).toBeUndefined();
    const served = spentOn(stack.sandbox);
    stack.sandbox.reset();

    const expected = [];
    for (const account of accounts) {
      const company = (await stack.rest(`companies?domain=${account.domain}&limit=1`)).data[0];
      const events = (await stack.rest(`funding-events?companyId=${company.id}&limit=2`)).data;
      expected.push({
        id: account.id,
        tier: account.tier,
        company: {
          domain: account.domain,
          accountOwner: account.owner,
          name: company.name,
          hqCountry: company.hqCountry ? { code: company.hqCountry.code } : null,
          fundingEvents: {
            nodes: events.map((e: any) => ({
              uuid: e.id,
              round: e.round,
              amountUsdCents: e.amountUsdCents,
            })),
          },
        },
      });
    }
    expect(body.data.accounts).toEqual(expected);

    // One _entities request to this gateway: a lookup by domain per company (one credit each),
    // then each company's funding events (up to two credits each).
    expect(served.requests).toBe(2 * accounts.length);
    const fromRouter = (headers.get('x-credits-used') ?? '')
      .split(',')
      .map((value) => Number(value.trim()))
      .reduce((sum, value) => sum + value, 0);
    expect(fromRouter).toBe(served.credits);
    expect(served.credits).toBeGreaterThan(accounts.length);
  });

  it('what becomes of extensions.credits through the router', async () => {
    const { headers, body } = await viaRouter(
      '{ companies(first: 2) { nodes { name accountOwner } } }',
    );
    expect(body.errors).toBeUndefined();
    const served = spentOn(stack.sandbox);
    // The router answers with its own extensions: this gateway's `credits` are not among them.
    expect(body.extensions?.credits).toBeUndefined();
    // The header carries them instead (docs/operations.md, "Behind a federation router").
    expect(Number(headers.get('x-credits-used'))).toBe(served.credits);
    expect(served.credits).toBe(2);
  });
});
