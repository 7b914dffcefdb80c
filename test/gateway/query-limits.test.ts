import { getIntrospectionQuery, Lexer, Source, TokenKind } from 'graphql';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EXAMPLE_QUERY } from '../../src/app.js';
import { startStack, type GraphQLResponse, type Stack } from '../helpers/start-stack.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack?.close());
beforeEach(() => stack.sandbox.reset());

/** `field(first: 1) { edges { node { <inner> } } }`: three levels of depth. */
const hop = (field: string, inner: string) => `${field}(first: 1) { edges { node { ${inner} } } }`;

/**
 * A Relay query four connections deep whose leaf is at depth 16: companies, their funding rounds,
 * the round's company's executive moves, the person's other moves, and `leaf` in each move's
 * company (`name`; `hqCountry { code }` makes 17).
 */
const relayQuery = (leaf = 'name') =>
  `{ ${hop('companies', hop('fundingEvents', `company { ${hop('execMoves', `person { ${hop('execMoves', `company { ${leaf} } role`)} }`)} }`))} }`;

/** Six connections deep, through embedded companies, a person and an acquisition's target. */
const SIX_CONNECTIONS_DEEP = `{ ${hop('companies', hop('fundingEvents', `company { ${hop('execMoves', `person { ${hop('execMoves', `company { ${hop('acquisitions', `target { ${hop('fundingEvents', 'round')} }`)} }`)} }`)} }`))} }`;

/** The number of lexical tokens in `document` (comments not counted), as a parser counts them. */
function tokens(document: string): number {
  const lexer = new Lexer(new Source(document));
  let count = 0;
  while (lexer.advance().kind !== TokenKind.EOF) count++;
  return count;
}

/** A document of exactly `count` tokens that runs nothing: a skipped field with a long list. */
function documentOfTokens(count: number): string {
  const padded = (values: number) =>
    `{ __typename acquisitions(paymentType: [${' "x"'.repeat(values)} ]) @skip(if: true) { __typename } }`;
  const document = padded(count - tokens(padded(0)));
  expect(tokens(document)).toBe(count);
  return document;
}

/** Asserts `response` is a refusal with `code` (HTTP 400) and that nothing reached the service. */
function expectRefused(response: GraphQLResponse, code: string, details: object) {
  expect(response.status).toBe(400);
  expect(response.data).toBeUndefined();
  expect(response.errors).toEqual([
    {
      message: expect.stringMatching(/the limit is .*Nothing ran/),
      extensions: { code, ...details },
    },
  ]);
  expect(response.extensions?.upstreamRequests).toBe(0);
  expect(stack.sandbox.requestLog()).toHaveLength(0);
}

describe('MAX_DEPTH (default 16)', () => {
  it('a Relay query four connections deep, its leaf at depth 16, runs', async () => {
    const response = await stack.gql(relayQuery());
    expect(response.errors).toBeUndefined();
    expect(response.data.companies.edges).toHaveLength(1);
    expect(response.extensions!.upstreamRequests).toBeGreaterThan(0);
  });

  it('one level more is MAX_DEPTH_EXCEEDED, with the limit and the depth found', async () => {
    const response = await stack.gql(relayQuery('hqCountry { code }'));
    expectRefused(response, 'MAX_DEPTH_EXCEEDED', { limit: 16, found: 17 });
    expect(response.errors![0]!.message).toBe(
      'The operation nests fields 17 levels deep; the limit is 16 (MAX_DEPTH). Nothing ran: ask for less, or split the query into several.',
    );
  });

  it('fragments count as the fields they hold, the way Relay clients spread them', async () => {
    const query = `{ companies(first: 1) { ...List } }
      fragment List on CompanyConnection { edges { node { ...Company } } }
      fragment Company on Company { fundingEvents(first: 1) { edges { node { ...Round } } } }
      fragment Round on FundingEvent { company { execMoves(first: 1) { edges { node { ...Move } } } } }
      fragment Move on ExecMove { person { execMoves(first: 1) { edges { node { ... on ExecMove { company { name } } } } } } }`;
    const response = await stack.gql(query);
    expect(response.errors).toBeUndefined();
    stack.sandbox.reset();
    const deeper = query.replace('company { name }', 'company { hqCountry { code } }');
    expectRefused(await stack.gql(deeper), 'MAX_DEPTH_EXCEEDED', { limit: 16, found: 17 });
  });

  it('a Relay query six connections deep (23 levels) is refused', async () => {
    expectRefused(await stack.gql(SIX_CONNECTIONS_DEEP), 'MAX_DEPTH_EXCEEDED', {
      limit: 16,
      found: 23,
    });
  });

  it("GraphiQL's example query runs", async () => {
    const response = await stack.gql(EXAMPLE_QUERY);
    expect(response.errors).toBeUndefined();
    expect(response.data.fundingEvents.edges.length).toBeGreaterThan(0);
  });
});

describe('the introspection query is never refused', () => {
  it.each([
    ['as graphql-js writes it', getIntrospectionQuery()],
    [
      'with every option GraphiQL and codegen tools may turn on',
      getIntrospectionQuery({
        descriptions: true,
        specifiedByUrl: true,
        directiveIsRepeatable: true,
        schemaDescription: true,
        inputValueDeprecation: true,
        oneOf: true,
      }),
    ],
  ])('%s', async (_how, query) => {
    const response = await stack.gql(query, {}, { key: null });
    expect(response.status).toBe(200);
    expect(response.errors).toBeUndefined();
    expect(response.data.__schema.queryType.name).toBe('Query');
  });
});

describe('MAX_ALIASES (default 20)', () => {
  const aliased = (count: number) =>
    `{ ${Array.from({ length: count }, (_, i) => `t${i}: __type(name: "Query") { name }`).join(' ')} }`;

  it('20 aliases run', async () => {
    const response = await stack.gql(aliased(20));
    expect(response.errors).toBeUndefined();
    expect(response.data.t19).toEqual({ name: 'Query' });
  });

  it('21 are MAX_ALIASES_EXCEEDED', async () => {
    expectRefused(await stack.gql(aliased(21)), 'MAX_ALIASES_EXCEEDED', { limit: 20, found: 21 });
  });

  it('aliases in fragments count at every spread; aliases of __typename do not count', async () => {
    const query = `{ a: __typename b: __typename ...F ...F ...F }
      fragment F on Query { ${Array.from({ length: 7 }, (_, i) => `t${i}: __type(name: "Query") { name }`).join(' ')} }`;
    expectRefused(await stack.gql(query), 'MAX_ALIASES_EXCEEDED', { limit: 20, found: 21 });
    const fewer = await stack.gql(query.replace(' t6: __type(name: "Query") { name }', ''));
    expect(fewer.errors).toBeUndefined();
  });
});

describe('MAX_TOKENS (default 5,000)', () => {
  it('a document of 5,000 tokens runs', async () => {
    const response = await stack.gql(documentOfTokens(5_000));
    expect(response.errors).toBeUndefined();
    expect(response.data).toEqual({ __typename: 'Query' });
  });

  it('5,001 tokens are MAX_TOKENS_EXCEEDED, refused while parsing', async () => {
    const response = await stack.gql(documentOfTokens(5_001));
    expectRefused(response, 'MAX_TOKENS_EXCEEDED', { limit: 5_000 });
    expect(response.errors![0]!.message).toMatch(
      /more than 5000 tokens; the limit is 5000 \(MAX_TOKENS\)/,
    );
  });

  it('comments do not count', async () => {
    const document = `# ${'x '.repeat(10_000)}\n${documentOfTokens(5_000)}`;
    const response = await stack.gql(document);
    expect(response.errors).toBeUndefined();
  });

  it('a document of 21,000 tokens stops the parser at 5,001', async () => {
    const fields = Array.from({ length: 7_000 }, (_, i) => `f${i}: __typename`).join(' ');
    expectRefused(await stack.gql(`{ ${fields} }`), 'MAX_TOKENS_EXCEEDED', { limit: 5_000 });
  });
});

describe('MAX_DIRECTIVES (default 50)', () => {
  const directed = (count: number) => `{ ${'__typename @include(if: true) '.repeat(count)}}`;

  it('50 directives run', async () => {
    const response = await stack.gql(directed(50));
    expect(response.errors).toBeUndefined();
    expect(response.data).toEqual({ __typename: 'Query' });
  });

  it('51 are MAX_DIRECTIVES_EXCEEDED', async () => {
    const response = await stack.gql(directed(51));
    expectRefused(response, 'MAX_DIRECTIVES_EXCEEDED', { limit: 50, found: 51 });
  });
});

describe('a refusal', () => {
  it('is HTTP 200 to a client that accepts only application/json, as Yoga answers validation errors', async () => {
    const response = await fetch(stack.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ query: relayQuery('hqCountry { code }') }),
    });
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body.errors[0].extensions).toEqual({ code: 'MAX_DEPTH_EXCEEDED', limit: 16, found: 17 });
    expect(stack.sandbox.requestLog()).toHaveLength(0);
  });

  it('comes with the schema errors of the same document', async () => {
    const response = await stack.gql(relayQuery('hqCountry { code nope }'));
    expect(response.status).toBe(400);
    expect(response.errors!.map((e) => e.extensions!.code).sort()).toEqual([
      'GRAPHQL_VALIDATION_FAILED',
      'MAX_DEPTH_EXCEEDED',
    ]);
    expect(stack.sandbox.requestLog()).toHaveLength(0);
  });

  it('is the same for the same document sent again (Yoga caches parsing and validation)', async () => {
    for (const query of [relayQuery('hqCountry { code }'), documentOfTokens(5_001)]) {
      const first = await stack.gql(query);
      const again = await stack.gql(query);
      expect(again).toEqual(first);
    }
    expect(stack.sandbox.requestLog()).toHaveLength(0);
  });
});

describe('the settings', () => {
  let tight: Stack;
  beforeAll(async () => {
    tight = await startStack({
      config: { maxDepth: 2, maxAliases: 1, maxTokens: 1_000, maxDirectives: 1 },
    });
  });
  afterAll(() => tight?.close());

  /** The code and limit of each error `query` gets from the tight stack. */
  const refusals = async (query: string) =>
    (await tight.gql(query)).errors?.map((e) => [e.extensions!.code, e.extensions!.limit]);

  it('MAX_DEPTH, MAX_ALIASES, MAX_TOKENS and MAX_DIRECTIVES set the limits', async () => {
    expect(await refusals(`{ a: __type(name: "Query") { name } }`)).toBeUndefined();
    expect(await refusals(`{ __type(name: "Query") { fields { name } } }`)).toEqual([
      ['MAX_DEPTH_EXCEEDED', 2],
    ]);
    expect(
      await refusals(`{ a: __typename b: __type(name: "Q") { name } c: __schema { __typename } }`),
    ).toEqual([['MAX_ALIASES_EXCEEDED', 1]]);
    expect(await refusals(documentOfTokens(1_000))).toBeUndefined();
    expect(await refusals(documentOfTokens(1_001))).toEqual([['MAX_TOKENS_EXCEEDED', 1_000]]);
    expect(await refusals(`{ __typename @include(if: true) @skip(if: false) }`)).toEqual([
      ['MAX_DIRECTIVES_EXCEEDED', 1],
    ]);
    expect(tight.sandbox.requestLog()).toHaveLength(0);
  });

  it('the introspection query passes whatever MAX_DEPTH is: `__schema` is not counted', async () => {
    const response = await tight.gql(getIntrospectionQuery({ inputValueDeprecation: true }));
    expect(response.errors).toBeUndefined();
    expect(response.data.__schema.queryType.name).toBe('Query');
  });
});
