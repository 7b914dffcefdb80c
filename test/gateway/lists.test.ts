import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../helpers/start-stack.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack?.close());
beforeEach(() => stack.sandbox.reset());

const FUNDING_FIELDS = `id uuid round amountUsdCents amountUsd amountOriginalCurrency amountOriginalCents
  announcedAt discoveredAt sources { url extractedAt } investors { id uuid name }
  company { uuid name domain hqCountry { code name } }`;

/** Every list, with GraphQL arguments and the REST query that must give the same records. */
const cases: [field: string, endpoint: string, args: string, rest: string][] = [
  ['fundingEvents', 'funding-events', 'round: ["series_a", "seed"]', 'round=series_a&round=seed'],
  [
    'fundingEvents',
    'funding-events',
    'minAmountUsd: 5000000, maxAmountUsd: 50000000',
    'minAmountUsd=5000000&maxAmountUsd=50000000',
  ],
  ['fundingEvents', 'funding-events', 'country: "US"', 'country=US'],
  [
    'fundingEvents',
    'funding-events',
    'industryGroup: "Climate & Energy"',
    'industryGroup=Climate%20%26%20Energy',
  ],
  [
    'fundingEvents',
    'funding-events',
    'since: "2025-06-01T00:00:00Z"',
    'since=2025-06-01T00:00:00Z',
  ],
  ['acquisitions', 'acquisitions', 'paymentType: ["cash"]', 'paymentType=cash'],
  ['acquisitions', 'acquisitions', 'isMerger: true', 'isMerger=true'],
  [
    'acquisitions',
    'acquisitions',
    'isMerger: false, minAmountUsd: 1000000',
    'isMerger=false&minAmountUsd=1000000',
  ],
  ['acquisitions', 'acquisitions', 'maxAmountUsd: 20000000', 'maxAmountUsd=20000000'],
  ['execMoves', 'exec-moves', 'roleSeniority: ["c_level"]', 'roleSeniority=c_level'],
  [
    'execMoves',
    'exec-moves',
    'moveType: ["departure", "promotion"]',
    'moveType=departure&moveType=promotion',
  ],
  [
    'execMoves',
    'exec-moves',
    'since: "2024-01-01", until: "2025-01-01"',
    'since=2024-01-01&until=2025-01-01',
  ],
  ['companies', 'companies', 'search: "data"', 'search=data'],
  ['companies', 'companies', 'country: "DE"', 'country=DE'],
  ['companies', 'companies', 'employeeCountBucket: "51-200"', 'employeeCountBucket=51-200'],
  [
    'companies',
    'companies',
    'foundedYearMin: 2010, foundedYearMax: 2015',
    'foundedYearMin=2010&foundedYearMax=2015',
  ],
  ['companies', 'companies', 'industryGroup: "Fintech"', 'industryGroup=Fintech'],
  ['companies', 'companies', 'since: "2025-01-01T00:00:00.000Z"', 'since=2025-01-01T00:00:00.000Z'],
  ['investors', 'investors', 'type: ["vc", "angel"]', 'type=vc&type=angel'],
  ['investors', 'investors', 'country: "GB"', 'country=GB'],
  ['investors', 'investors', 'search: "capital"', 'search=capital'],
];

describe('lists match the REST endpoints', () => {
  it.each(cases)('%s(%s) = GET /v1/%s?%s', async (field, endpoint, args, rest) => {
    const response = await stack.gql(
      `{ ${field}(first: 30, ${args}) { nodes { uuid } pageInfo { hasNextPage } } }`,
    );
    expect(response.errors).toBeUndefined();
    const expected = await stack.rest(`${endpoint}?${rest}&limit=30`);
    expect(expected.data.length, 'the case selects some records').toBeGreaterThan(0);
    const got = response.data[field];
    expect(got.nodes.map((n: { uuid: string }) => n.uuid)).toEqual(
      expected.data.map((r: { id: string }) => r.id),
    );
    expect(got.pageInfo.hasNextPage).toBe(expected.pagination.hasMore);
    expect(response.extensions).toMatchObject({
      credits: { used: expected.data.length },
      upstreamRequests: 1,
    });
  });

  it('filters on a company by uuid or by global id, and a person likewise', async () => {
    const move = stack.sandbox.data.execMoves[3]!;
    const byUuid = await stack.gql(
      `{ execMoves(companyId: "${move.company.id}", personId: "${move.person.id}") { nodes { uuid company { id } person { id } } } }`,
    );
    expect(byUuid.data.execMoves.nodes.map((n: any) => n.uuid)).toContain(move.id);
    const { company, person } = byUuid.data.execMoves.nodes[0];
    const byId = await stack.gql(
      `{ execMoves(companyId: "${company.id}", personId: "${person.id}") { nodes { uuid } } }`,
    );
    expect(byId.data.execMoves.nodes).toEqual(
      byUuid.data.execMoves.nodes.map((n: any) => ({ uuid: n.uuid })),
    );
  });

  it('domain and companyId filters match the REST endpoints', async () => {
    const company = stack.sandbox.data.companies[7]!;
    const investor = stack.sandbox.data.investors.find((i) => i.domain)!;
    const event = stack.sandbox.data.fundingEvents[11]!;
    for (const [field, args, rest] of [
      ['companies', `domain: "${company.domain}"`, `companies?domain=${company.domain}`],
      ['investors', `domain: "${investor.domain}"`, `investors?domain=${investor.domain}`],
      [
        'fundingEvents',
        `companyId: "${event.company.id}"`,
        `funding-events?companyId=${event.company.id}`,
      ],
    ] as const) {
      const response = await stack.gql(`{ ${field}(first: 50, ${args}) { nodes { uuid } } }`);
      const expected = await stack.rest(`${rest}&limit=50`);
      expect(expected.data.length).toBeGreaterThan(0);
      expect(response.data[field].nodes.map((n: any) => n.uuid)).toEqual(
        expected.data.map((r: any) => r.id),
      );
    }
  });

  it('acquisitions by companyId match acquirer or target', async () => {
    const deal = stack.sandbox.data.acquisitions[0]!;
    for (const company of [deal.acquirer, deal.target]) {
      const response = await stack.gql(
        `{ acquisitions(companyId: "${company.id}", first: 100) { nodes { uuid acquirer { uuid } target { uuid } } } }`,
      );
      const nodes = response.data.acquisitions.nodes;
      expect(nodes.map((n: any) => n.uuid)).toContain(deal.id);
      for (const n of nodes) expect([n.acquirer.uuid, n.target.uuid]).toContain(company.id);
    }
  });

  it('returns every field of a funding event exactly as the REST record', async () => {
    const response = await stack.gql(
      `{ fundingEvents(first: 20) { nodes { ${FUNDING_FIELDS} } } }`,
    );
    const rest = await stack.rest('funding-events?limit=20');
    response.data.fundingEvents.nodes.forEach((node: any, i: number) => {
      const record = rest.data[i];
      expect(node).toMatchObject({
        uuid: record.id,
        round: record.round,
        amountUsdCents: record.amountUsdCents,
        amountUsd: record.amountUsd,
        amountOriginalCurrency: record.amountOriginalCurrency,
        amountOriginalCents: record.amountOriginalCents,
        announcedAt: record.announcedAt,
        discoveredAt: record.discoveredAt,
        sources: record.sources,
        company: {
          uuid: record.company.id,
          name: record.company.name,
          domain: record.company.domain,
          hqCountry: record.company.hqCountry,
        },
      });
      expect(node.investors.map((inv: any) => ({ uuid: inv.uuid, name: inv.name }))).toEqual(
        record.investors.map((inv: any) => ({ uuid: inv.id, name: inv.name })),
      );
    });
  });

  it('carries amounts in cents above 2^31 exactly', async () => {
    const big = stack.sandbox.data.acquisitions.find((a) => (a.dealAmountUsdCents ?? 0) > 2 ** 31);
    expect(big, 'the sandbox data has a deal above $21.4M').toBeDefined();
    const response = await stack.gql(
      `{ acquisitions(companyId: "${big!.acquirer.id}", first: 100) { nodes { uuid dealAmountUsdCents dealAmountOriginalCents dealAmountUsd } } }`,
    );
    const node = response.data.acquisitions.nodes.find((n: any) => n.uuid === big!.id);
    expect(node.dealAmountUsdCents).toBe(big!.dealAmountUsdCents);
    expect(node.dealAmountOriginalCents).toBe(big!.dealAmountOriginalCents);
    expect(node.dealAmountUsd).toBe(big!.dealAmountUsd);
  });

  it('sends argument values as values: &, = and # cannot add or change a parameter', async () => {
    const search = 'a&limit=1&country=DE#x=y';
    const response = await stack.gql(
      `query ($s: String) { companies(search: $s, first: 3) { nodes { uuid } } }`,
      {
        s: search,
      },
    );
    expect(response.errors).toBeUndefined();
    const [entry] = stack.sandbox.requestLog();
    expect(entry!.params).toEqual({ search: [search], limit: ['3'] });
  });
});

describe('paging', () => {
  async function pageAll(field: string, args: string, first: number) {
    const uuids: string[] = [];
    let after: string | null = null;
    let credits = 0;
    let requests = 0;
    for (let pages = 0; pages < 200; pages++) {
      const response: any = await stack.gql(
        `query ($after: String) { ${field}(first: ${first}, after: $after, ${args}) { edges { cursor node { uuid } } pageInfo { hasNextPage endCursor } } }`,
        { after },
      );
      expect(response.errors).toBeUndefined();
      const { edges, pageInfo } = response.data[field];
      uuids.push(...edges.map((e: any) => e.node.uuid));
      credits += response.extensions.credits.used;
      requests += response.extensions.upstreamRequests;
      if (!pageInfo.hasNextPage) break;
      after = pageInfo.endCursor;
    }
    return { uuids, credits, requests };
  }

  async function restAll(endpoint: string, query: string) {
    const ids: string[] = [];
    let cursor: string | null = null;
    for (;;) {
      const page: any = await stack.rest(
        `${endpoint}?${query}&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      ids.push(...page.data.map((r: any) => r.id));
      if (!page.pagination.hasMore) return ids;
      cursor = page.pagination.nextCursor;
    }
  }

  it.each([
    ['fundingEvents', 'funding-events', 'round: ["seed"]', 'round=seed', 7],
    ['companies', 'companies', 'country: "US"', 'country=US', 13],
    [
      'execMoves',
      'exec-moves',
      'roleSeniority: ["c_level", "vp"]',
      'roleSeniority=c_level&roleSeniority=vp',
      40,
    ],
  ])(
    '%s(%s) through `after` gives the REST records, each once, one credit each',
    async (field, endpoint, args, rest, first) => {
      const expected = await restAll(endpoint, rest);
      expect(expected.length).toBeGreaterThan(first * 2);
      stack.sandbox.reset();
      const { uuids, credits, requests } = await pageAll(field, args, first);
      expect(uuids).toEqual(expected);
      expect(new Set(uuids).size).toBe(uuids.length);
      expect(credits).toBe(uuids.length);
      expect(requests).toBe(Math.ceil(expected.length / first));
      expect(stack.sandbox.counters().records).toBe(uuids.length);
    },
  );

  it('serves first > 100 by chaining upstream pages, never fetching more than asked', async () => {
    const response = await stack.gql(
      `{ fundingEvents(first: 250) { nodes { uuid } pageInfo { hasNextPage } } }`,
    );
    expect(response.data.fundingEvents.nodes).toHaveLength(250);
    expect(response.extensions).toEqual({
      credits: { used: 250, saved: 0, remaining: expect.any(Number), estimate: 250, budget: 1000 },
      upstreamRequests: 3,
      upstreamRetries: 0,
    });
    expect(stack.sandbox.requestLog().map((e) => e.params.limit)).toEqual([
      ['100'],
      ['100'],
      ['50'],
    ]);
  });

  it('resumes right after a middle edge', async () => {
    const all = await stack.gql(`{ companies(first: 10) { edges { cursor node { uuid } } } }`);
    const edges = all.data.companies.edges;
    const resumed = await stack.gql(
      `query ($after: String) { companies(first: 4, after: $after) { nodes { uuid } } }`,
      { after: edges[3].cursor },
    );
    expect(resumed.data.companies.nodes.map((n: any) => n.uuid)).toEqual(
      edges.slice(4, 8).map((e: any) => e.node.uuid),
    );
  });

  it('refuses first above the maximum, last and before, before any request', async () => {
    const tooMany = await stack.gql(`{ companies(first: 501) { nodes { uuid } } }`);
    expect(tooMany.errors![0]).toMatchObject({
      message: expect.stringContaining('first'),
      extensions: { code: 'INVALID_INPUT', argument: 'first' },
    });
    const backwards = await stack.gql(`{ companies(last: 5) { nodes { uuid } } }`);
    expect(backwards.errors![0]).toMatchObject({
      message: expect.stringContaining('forward only'),
      extensions: { code: 'INVALID_INPUT', argument: 'last' },
    });
    expect(stack.sandbox.requestLog()).toHaveLength(0);
  });

  it('rejects a cursor reused with other filters, or altered, without a request', async () => {
    const first = await stack.gql(
      `{ fundingEvents(first: 2, round: ["seed"]) { pageInfo { endCursor } } }`,
    );
    const cursor: string = first.data.fundingEvents.pageInfo.endCursor;
    stack.sandbox.reset();
    const other = await stack.gql(
      `query ($c: String) { fundingEvents(first: 2, round: ["series_a"], after: $c) { nodes { uuid } } }`,
      { c: cursor },
    );
    expect(other.errors![0]).toMatchObject({
      message: expect.stringContaining('different'),
      extensions: { code: 'INVALID_INPUT', argument: 'after' },
    });
    const altered = `${cursor.slice(0, -3)}${cursor.endsWith('AAA') ? 'BBB' : 'AAA'}`;
    const tampered = await stack.gql(
      `query ($c: String) { fundingEvents(first: 2, round: ["seed"], after: $c) { nodes { uuid } } }`,
      { c: altered },
    );
    expect(tampered.errors![0]!.extensions).toEqual({ code: 'INVALID_INPUT', argument: 'after' });
    expect(stack.sandbox.requestLog()).toHaveLength(0);
  });
});

describe('validation happens before any request', () => {
  it.each([
    ['fundingEvents(minAmountUsd: -1)', 'minAmountUsd'],
    ['acquisitions(maxAmountUsd: -0.5)', 'maxAmountUsd'],
    ['companies(foundedYearMin: -3)', 'foundedYearMin'],
    ['companies(foundedYearMax: -1)', 'foundedYearMax'],
    ['execMoves(companyId: "acme")', 'companyId'],
    ['execMoves(personId: "123")', 'personId'],
    ['companies(first: -1)', 'first'],
  ])('%s is INVALID_INPUT naming %s', async (call, argument) => {
    const response = await stack.gql(`{ ${call} { nodes { uuid } } }`);
    expect(response.errors![0]).toMatchObject({
      message: expect.stringContaining(argument),
      extensions: { code: 'INVALID_INPUT', argument },
    });
    // Estimated (the resolver refuses the argument later), and nothing spent.
    expect(response.extensions).toMatchObject({
      credits: { used: 0, saved: 0, remaining: null, budget: 1000 },
      upstreamRequests: 0,
    });
    expect(stack.sandbox.requestLog()).toHaveLength(0);
  });

  it.each([
    ['companies(country: "")', 'country', 'must not be empty or blank'],
    ['companies(search: "   ")', 'search', 'must not be empty or blank'],
    ['investors(domain: "")', 'domain', 'must not be empty or blank'],
    ['fundingEvents(round: ["seed", ""])', 'round', 'each value must not be empty or blank'],
    ['execMoves(moveType: [" "])', 'moveType', 'each value must not be empty or blank'],
  ])('%s: an empty value is INVALID_INPUT naming %s', async (call, argument, rule) => {
    const response = await stack.gql(`{ ${call} { nodes { uuid } } }`);
    expect(response.errors![0]).toMatchObject({
      message: `Argument "${argument}": ${rule}.`,
      extensions: { code: 'INVALID_INPUT', argument },
    });
    expect(stack.sandbox.requestLog()).toHaveLength(0);
  });

  it('a list of 2,000 values or a 100,000-character search is refused by the gateway, not the service', async () => {
    const rounds = Array.from({ length: 2000 }, (_, i) => `round_${i}`);
    const search = 'x'.repeat(100_000);
    const response = await stack.gql(
      `query ($rounds: [String!], $search: String) {
        fundingEvents(round: $rounds) { nodes { uuid } }
        companies(search: $search) { nodes { uuid } }
        nested: companies(first: 1) { nodes { fundingEvents(round: $rounds) { nodes { uuid } } } }
      }`,
      { rounds, search },
    );
    expect(response.errors).toHaveLength(3);
    expect(response.errors![0]).toMatchObject({
      path: ['fundingEvents'],
      message: 'Argument "round": takes at most 20 values (got 2000).',
      extensions: { code: 'INVALID_INPUT', argument: 'round' },
    });
    expect(response.errors![1]).toMatchObject({
      path: ['companies'],
      message: 'Argument "search": must be at most 200 characters (got 100000).',
      extensions: { code: 'INVALID_INPUT', argument: 'search' },
    });
    // Under a company too: the one request made is the company's own page.
    expect(response.errors![2]).toMatchObject({
      path: ['nested', 'nodes', 0, 'fundingEvents'],
      extensions: { code: 'INVALID_INPUT', argument: 'round' },
    });
    expect(response.data.nested.nodes).toEqual([{ fundingEvents: null }]);
    expect(stack.sandbox.requestLog()).toHaveLength(1);
  });

  it('a malformed timestamp is INVALID_INPUT, inline or as a variable', async () => {
    const inline = await stack.gql(`{ fundingEvents(since: "last week") { nodes { uuid } } }`);
    expect(inline.errors![0]!.extensions!.code).toBe('INVALID_INPUT');
    expect(inline.errors![0]!.message).toContain('ISO-8601');
    const variable = await stack.gql(
      `query ($s: DateTime) { execMoves(until: $s) { nodes { uuid } } }`,
      { s: '2024-02-30T99:00:00Z' },
    );
    expect(variable.errors![0]!.message).toContain('ISO-8601');
    expect(variable.errors![0]!.extensions!.code).toBe('INVALID_INPUT');
    expect(stack.sandbox.requestLog()).toHaveLength(0);
  });

  it.each([
    ['a fraction', { y: 1.5 }],
    ['an integer above 32 bits', { y: 2147483648 }],
    ['a string of digits', { y: '2000' }],
    ['a list', { y: [2000] }],
    ['nothing, for a required variable', {}, 'Int!'],
  ])('an Int variable given %s is BAD_USER_INPUT', async (_what, variables, type = 'Int') => {
    const response = await stack.gql(
      `query ($y: ${type}) { companies(foundedYearMin: $y) { nodes { uuid } } }`,
      variables,
    );
    expect(response.data).toBeUndefined();
    expect(response.errors).toEqual([
      expect.objectContaining({
        message: expect.stringContaining('$y'),
        extensions: { code: 'BAD_USER_INPUT' },
      }),
    ]);
    // Refused before the estimate.
    expect(response.extensions).toEqual({
      credits: { used: 0, saved: 0, remaining: null, estimate: null, budget: null },
      upstreamRequests: 0,
      upstreamRetries: 0,
    });
    expect(stack.sandbox.requestLog()).toHaveLength(0);
  });

  it("a variable's own scalar code is kept, next to BAD_USER_INPUT for the others", async () => {
    const response = await stack.gql(
      `query ($s: DateTime, $f: Float, $r: [String!]) {
        fundingEvents(since: $s, minAmountUsd: $f, round: $r) { nodes { uuid } }
      }`,
      { s: 'last week', f: 'a lot', r: [null] },
    );
    expect(response.errors!.map((e) => [e.message.slice(0, 12), e.extensions])).toEqual([
      ['Variable "$s', { code: 'INVALID_INPUT' }],
      ['Variable "$f', { code: 'BAD_USER_INPUT' }],
      ['Variable "$r', { code: 'BAD_USER_INPUT' }],
    ]);
    expect(stack.sandbox.requestLog()).toHaveLength(0);
  });

  it('a date that does not exist is INVALID_INPUT, not sent to the service', async () => {
    const response = await stack.gql(
      `{ fundingEvents(since: "2024-04-31T10:00:00Z") { nodes { uuid } } }`,
    );
    expect(stack.sandbox.requestLog()).toHaveLength(0);
    expect(response.extensions!.upstreamRequests).toBe(0);
    expect(response.errors![0]).toMatchObject({
      message: expect.stringMatching(/DateTime must be .*"2024-04-31T10:00:00Z"/),
      extensions: { code: 'INVALID_INPUT' },
    });
  });

  it('a bad argument fails only its own field', async () => {
    const response = await stack.gql(
      `{ good: companies(first: 2) { nodes { uuid } } bad: fundingEvents(minAmountUsd: -1) { nodes { uuid } } }`,
    );
    expect(response.data.good.nodes).toHaveLength(2);
    expect(response.data.bad).toBeNull();
    expect(response.errors).toHaveLength(1);
    expect(response.errors![0]!.path).toEqual(['bad']);
  });
});
