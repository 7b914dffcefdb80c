import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config.js';
import { justBefore } from '../../src/nodes/find-in-list.js';
import { resolveUpstreamConnection } from '../../src/pagination/resolve-upstream-connection.js';
import { createUpstream, type Upstream } from '../../src/upstream/create-upstream.js';
import { UpstreamSession } from '../../src/upstream/upstream-session.js';
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

const budget = (credits: number | string) => ({ headers: { 'x-credit-budget': String(credits) } });

describe('the budget, checked before anything runs', () => {
  it('an operation above its budget is refused with both figures, and nothing reaches the upstream', async () => {
    const response = await stack.gql(
      `{ fundingEvents(first: 51) { nodes { uuid } } }`,
      {},
      budget(50),
    );
    expect(response.data ?? null).toBeNull();
    expect(response.errors).toEqual([
      {
        message: expect.stringMatching(
          /estimated at 51 credits, above its budget of 50.*X-Credit-Budget/,
        ),
        extensions: { code: 'CREDIT_BUDGET_EXCEEDED', estimate: 51, budget: 50 },
      },
    ]);
    expect(response.extensions).toEqual({
      credits: { used: 0, saved: 0, remaining: null, estimate: 51, budget: 50 },
      upstreamRequests: 0,
      upstreamRetries: 0,
    });
    expect(spent()).toEqual({ requests: 0, credits: 0 });
  });

  it('an operation at its budget runs', async () => {
    const response = await stack.gql(
      `{ fundingEvents(first: 50) { nodes { uuid } } }`,
      {},
      budget(50),
    );
    expect(response.errors).toBeUndefined();
    expect(response.data.fundingEvents.nodes).toHaveLength(50);
    expect(response.extensions!.credits).toMatchObject({ used: 50, estimate: 50, budget: 50 });
    expect(spent().credits).toBe(50);
  });

  it('without the header, the default budget (1,000) applies', async () => {
    const within = await stack.gql(`{ fundingEvents(first: 500) { nodes { uuid } } }`);
    expect(within.errors).toBeUndefined();
    expect(within.extensions!.credits).toMatchObject({ estimate: 500, budget: 1000 });
    stack.sandbox.reset();
    const above = await stack.gql(`{
      a: fundingEvents(first: 500) { nodes { uuid } }
      b: companies(first: 500) { nodes { uuid } }
      c: investors(first: 1) { nodes { uuid } }
    }`);
    expect(above.errors![0]!.extensions).toEqual({
      code: 'CREDIT_BUDGET_EXCEEDED',
      estimate: 1001,
      budget: 1000,
    });
    expect(spent().requests).toBe(0);
  });

  it('a budget above the ceiling (CREDIT_BUDGET_MAX, 10,000) is lowered to it, and the message says so', async () => {
    const response = await stack.gql(
      `{ fundingEvents(first: 500) { nodes { company { execMoves(first: 100) { nodes { uuid } } } } } }`,
      {},
      budget(1_000_000),
    );
    expect(response.errors![0]!.extensions).toEqual({
      code: 'CREDIT_BUDGET_EXCEEDED',
      estimate: 50_500,
      budget: 10_000,
    });
    expect(response.errors![0]!.message).not.toContain('X-Credit-Budget');
    expect(spent().requests).toBe(0);
  });

  it.each(['-1', '1.5', 'lots', '', '1e3'])(
    'a budget header of "%s" is a 400 naming the header and the rule',
    async (value) => {
      const response = await stack.gql(
        `{ companies(first: 1) { nodes { uuid } } }`,
        {},
        budget(value),
      );
      // An empty header is no header: the default applies.
      if (value === '') {
        expect(response.errors).toBeUndefined();
        return;
      }
      expect(response.status).toBe(400);
      expect(response.errors![0]).toMatchObject({
        message: expect.stringContaining('Header "X-Credit-Budget": must be a whole number'),
        extensions: { code: 'BAD_REQUEST' },
      });
      expect(spent().requests).toBe(0);
    },
  );

  it('X-Credit-Estimate: only answers the estimate with data null and spends nothing', async () => {
    const response = await stack.gql(
      `{ fundingEvents(first: 50) { nodes { company { execMoves(first: 3) { nodes { uuid } } } } } }`,
      {},
      { headers: { 'x-credit-estimate': 'only' } },
    );
    expect(response.data).toBeNull();
    expect(response.errors).toBeUndefined();
    expect(response.extensions).toEqual({
      credits: { used: 0, saved: 0, remaining: null, estimate: 200, budget: 1000 },
      upstreamRequests: 0,
      upstreamRetries: 0,
    });
    expect(spent().requests).toBe(0);
  });

  it('X-Credit-Estimate: only also answers for an operation above the budget, without an error', async () => {
    const response = await stack.gql(
      `{ fundingEvents(first: 500) { nodes { company { fundingEvents(first: 500) { nodes { uuid } } } } } }`,
      {},
      { headers: { 'x-credit-estimate': 'only' } },
    );
    expect(response.data).toBeNull();
    expect(response.errors).toBeUndefined();
    expect(response.extensions!.credits).toMatchObject({ estimate: 250_500, budget: 1000 });
  });

  it('an answer that could hold more records than MAX_RESPONSE_RECORDS is refused before it runs', async () => {
    // 500 rounds, each with its company and 3 investors assumed (ROUND_INVESTORS_ASSUMED): 2,500.
    const query = `{ fundingEvents(first: 500) { nodes { uuid company { name } investors { name } } } }`;
    const small = await startStack({ config: { maxResponseRecords: 2_499 } });
    try {
      const refused = await small.gql(query);
      expect(refused.errors![0]).toMatchObject({
        message: expect.stringContaining('could hold 2500 records, above the limit of 2499'),
        extensions: { code: 'RESPONSE_TOO_LARGE', records: 2500, limit: 2499 },
      });
      expect(small.sandbox.requestLog()).toHaveLength(0);
    } finally {
      await small.close();
    }
    const allowed = await stack.gql(query);
    expect(allowed.errors).toBeUndefined();
  });
});

describe('the abuse shapes, under the default budget', () => {
  it('aliases of large lists with distinct filters', async () => {
    const aliases = Array.from(
      { length: 15 },
      (_, i) => `a${i}: fundingEvents(first: 500, minAmountUsd: ${i}) { nodes { uuid } }`,
    );
    const response = await stack.gql(`{ ${aliases.join('\n')} }`);
    expect(response.errors![0]!.extensions).toMatchObject({
      code: 'CREDIT_BUDGET_EXCEEDED',
      estimate: 7_500,
    });
    expect(spent().requests).toBe(0);
  });

  it('a nested fan-out', async () => {
    const response = await stack.gql(`{
      fundingEvents(first: 100) { edges { node { company { fundingEvents(first: 100) { edges { node { uuid } } } } } } }
    }`);
    expect(response.errors![0]!.extensions).toMatchObject({
      code: 'CREDIT_BUDGET_EXCEEDED',
      estimate: 10_100,
    });
    expect(spent().requests).toBe(0);
  });

  const nested = (levels: number) => {
    let selection = 'uuid';
    for (let level = 0; level < levels; level++) {
      selection = `company { fundingEvents(first: 4) { nodes { ${selection} } } }`;
    }
    return `{ fundingEvents(first: 4) { nodes { ${selection} } } }`;
  };

  it('deep nesting with a small first: every level multiplies', async () => {
    const response = await stack.gql(nested(4));
    expect(response.errors![0]!.extensions).toMatchObject({
      code: 'CREDIT_BUDGET_EXCEEDED',
      estimate: 4 + 16 + 64 + 256 + 1024,
    });
    expect(spent().requests).toBe(0);
  });

  it('ten levels deep (5 credits, a huge answer) is refused by the depth limit', async () => {
    const response = await stack.gql(nested(10));
    expect(response.errors![0]!.extensions).toMatchObject({ code: 'MAX_DEPTH_EXCEEDED' });
    expect(spent().requests).toBe(0);
  });
});

describe('the hard stop while running: at the budget, whatever the estimate', () => {
  let upstream: Upstream;
  beforeAll(() => {
    upstream = createUpstream({ baseUrl: stack.sandbox.url, timeoutMs: 5_000 });
  });
  afterAll(() => upstream.close());

  const session = (limit?: number) => {
    const s = new UpstreamSession(upstream.shared, {
      apiKey: stack.sandbox.keys.demo,
      concurrency: 8,
    });
    // An estimate of 1 credit: the stop is the budget, not the estimate.
    if (limit !== undefined) s.budget.set(limit, 1);
    return s;
  };
  const list = (s: UpstreamSession, first: number, after?: string | null) =>
    resolveUpstreamConnection(s, 'fundingEvents', {}, { first, after }, defaultConfig, () => {});

  it('cuts the page to the credits left, ends the list there, and its endCursor resumes exactly', async () => {
    const cut = await list(session(30), 100);
    expect(cut.edges).toHaveLength(30);
    expect(cut.pageInfo.hasNextPage).toBe(true);
    expect(spent()).toEqual({ requests: 1, credits: 30 });

    const rest = await list(session(), 70, cut.pageInfo.endCursor);
    const whole = await list(session(), 100);
    expect([...cut.edges, ...rest.edges].map((e) => e.node.id)).toEqual(
      whole.edges.map((e) => e.node.id),
    );
  });

  it('spends nothing more once the credits are gone, and reports CREDIT_BUDGET_EXHAUSTED', async () => {
    const s = session(120);
    const errors: unknown[] = [];
    const connection = await resolveUpstreamConnection(
      s,
      'fundingEvents',
      {},
      { first: 250 },
      defaultConfig,
      (error) => errors.push(error),
    );
    expect(connection.edges).toHaveLength(120);
    expect(connection.pageInfo.hasNextPage).toBe(true);
    expect(errors).toEqual([expect.objectContaining({ code: 'CREDIT_BUDGET_EXHAUSTED' })]);
    expect(spent()).toEqual({ requests: 2, credits: 120 });
  });

  it('concurrent lists share the limit: together they never pass it', async () => {
    const s = session(50);
    const lists = await Promise.all([
      list(s, 40),
      resolveUpstreamConnection(s, 'companies', {}, { first: 40 }, defaultConfig, () => {}),
    ]);
    expect(lists[0]!.edges.length + lists[1]!.edges.length).toBe(50);
    expect(spent().credits).toBe(50);
  });

  it('a list resuming inside a page is not sent when the credits left would not reach past it', async () => {
    const first = await list(session(), 5);
    const midPage = first.edges[2]!.cursor; // resuming re-reads 3 records
    const s = session(3);
    const errors: unknown[] = [];
    const connection = await resolveUpstreamConnection(
      s,
      'fundingEvents',
      {},
      { first: 5, after: midPage },
      defaultConfig,
      (error) => errors.push(error),
    );
    expect(connection.edges).toHaveLength(0);
    expect(connection.pageInfo).toMatchObject({ hasNextPage: true, endCursor: midPage });
    expect(errors).toEqual([expect.objectContaining({ code: 'CREDIT_BUDGET_EXHAUSTED' })]);
    expect(spent()).toEqual({ requests: 1, credits: 5 });
  });
});

describe('the hard stop in an operation: the budget, not the estimate', () => {
  /** An acquisition whose lookup list has newer deals before it: it costs more than assumed. */
  async function acquisitionDownItsList() {
    const listed = await stack.gql(
      `{ acquisitions(first: 50) { nodes { id uuid discoveredAt acquirer { uuid } } } }`,
    );
    for (const deal of listed.data.acquisitions.nodes) {
      const since = justBefore(deal.discoveredAt);
      const page = await stack.rest(
        `acquisitions?companyId=${deal.acquirer.uuid}&since=${since}&limit=1`,
      );
      if (page.data[0].id !== deal.uuid) return deal as { id: string; uuid: string };
    }
    throw new Error('no acquisition below the first of its lookup list');
  }

  it('an operation may cost more than its estimate, up to its budget', async () => {
    const deal = await acquisitionDownItsList();
    stack.sandbox.reset();
    const response = await stack.gql(`{ node(id: "${deal.id}") { ... on Acquisition { uuid } } }`);
    expect(response.errors).toBeUndefined();
    expect(response.data.node).toEqual({ uuid: deal.uuid });
    const { estimate, used } = response.extensions!.credits as Record<string, number>;
    expect(estimate).toBe(1);
    expect(used).toBeGreaterThan(estimate!);
    expect(spent().credits).toBe(used);
  });

  it('and never more: at its budget the lookup fails with CREDIT_BUDGET_EXHAUSTED', async () => {
    const deal = await acquisitionDownItsList();
    stack.sandbox.reset();
    const response = await stack.gql(
      `{ node(id: "${deal.id}") { ... on Acquisition { uuid } } }`,
      {},
      budget(1),
    );
    expect(response.data.node).toBeNull();
    expect(response.errors).toEqual([
      expect.objectContaining({
        path: ['node'],
        message: expect.stringContaining('has spent its credit budget (1)'),
        extensions: expect.objectContaining({ code: 'CREDIT_BUDGET_EXHAUSTED' }),
      }),
    ]);
    expect(response.extensions!.credits).toMatchObject({ estimate: 1, budget: 1, used: 1 });
    expect(spent()).toEqual({ requests: 1, credits: 1 });
  });
});

describe('a client that goes away', () => {
  it('stops its operation: no upstream request is sent after the disconnect', async () => {
    // 500 records are five upstream pages, one after the other, 300 ms each.
    stack.sandbox.setLatency({ fixedMs: 300 });
    const controller = new AbortController();
    const request = fetch(stack.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': stack.sandbox.keys.demo,
        ...NO_CACHE,
      },
      body: JSON.stringify({ query: `{ fundingEvents(first: 500) { nodes { uuid } } }` }),
      signal: controller.signal,
    }).catch((error: Error) => error);
    await new Promise((resolve) => setTimeout(resolve, 450));
    controller.abort();
    expect(await request).toBeInstanceOf(Error);
    // Long enough for the five pages had the operation gone on.
    await new Promise((resolve) => setTimeout(resolve, 1_800));
    expect(stack.sandbox.requestLog().length).toBeLessThanOrEqual(2);
  });
});
