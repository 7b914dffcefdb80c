import { readFileSync } from 'node:fs';
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { Defer20220824Handler } from '@apollo/client/incremental';
import { Client, fetchExchange } from '@urql/core';
import { buildSchema } from 'graphql';
import { tap } from 'rxjs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config.js';
import { captureLog, type LogLine } from '../helpers/capture-log.js';
import { scrape, valueOf } from '../helpers/prometheus.js';
import {
  NO_CACHE,
  spentOn,
  startGateway,
  startStack,
  type Gateway,
  type Stack,
} from '../helpers/start-stack.js';
import { eventually, subscribeSse, type Payload } from '../helpers/subscribe.js';

// `@defer` and `@stream` over HTTP, read by the clients web apps use: Apollo Client 4 (its
// HttpLink's multipart reader, with the `Defer20220824Handler` the gateway's format needs), urql
// (its fetchExchange, which reads multipart and merges the parts itself) and graphql-sse (an event
// stream). The shipped defaults (page cache on); a suite that counts upstream requests and
// credits sends `Cache-Control: no-cache`.

let stack: Stack;
let log: ReturnType<typeof captureLog>;
beforeAll(async () => {
  log = captureLog('info');
  stack = await startStack({ logger: log.logger });
});
afterAll(() => stack?.close());
beforeEach(() => {
  stack.sandbox.reset();
  log.lines.length = 0;
});

/** Rounds at once; one level down, each company's executive moves, deferred. */
const ROUNDS_THEN_MOVES = `query RoundsThenMoves {
  fundingEvents(first: 3) { edges { node { id round
    ... @defer(label: "moves") { company { id name execMoves(first: 2) { nodes { id role } } } }
  } } }
}`;

/** The same selection without `@defer`. */
const ROUNDS_WITH_MOVES = ROUNDS_THEN_MOVES.replace('@defer(label: "moves") ', '');

/** Rounds streamed after the first; each round's investors (loaded one by one) streamed too. */
const STREAMED_ROUNDS = `query StreamedRounds {
  fundingEvents(first: 4) { edges @stream(initialCount: 1) { node { id round
    investors @stream { id name type }
  } } }
}`;

const demo = () => ({ 'x-api-key': stack.sandbox.keys.demo });

/** A key of its own, for a test that must not meet another's kept answers or cached pages. */
let keys = 0;
function newKey(): string {
  const key = `defer-stream-key-${++keys}`;
  stack.sandbox.addKey(key, { credits: 1_000_000 });
  return key;
}

/** One payload as a client's HTTP layer read it, and when. */
interface Received {
  at: number;
  payload: Payload & {
    hasNext?: boolean;
    incremental?: {
      data?: Record<string, any> | null;
      items?: unknown[];
      path: (string | number)[];
      label?: string;
      errors?: { message: string; path?: (string | number)[]; extensions?: any }[];
    }[];
  };
}

/**
 * Apollo Client 4 set up for `@defer` and `@stream` as a web app does, in front of a link that
 * records each payload its HttpLink read (and when): the payloads as the server sent them.
 */
function apollo(headers: Record<string, string>, uri = stack.url) {
  const received: Received[] = [];
  const record = new ApolloLink((operation, forward) =>
    forward(operation).pipe(
      tap((payload) => received.push({ at: Date.now(), payload: payload as Received['payload'] })),
    ),
  );
  const client = new ApolloClient({
    link: ApolloLink.from([record, new HttpLink({ uri, headers })]),
    cache: new InMemoryCache(),
    incrementalHandler: new Defer20220824Handler(),
  });
  return { client, received };
}

/** `value` without the `__typename`s Apollo Client adds to every selection. */
function untyped(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(untyped);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== '__typename')
      .map(([key, item]) => [key, untyped(item)]),
  );
}

/** The parts of the payloads after the first. */
const partsOf = (received: Received[]) =>
  received.slice(1).flatMap(({ payload }) => payload.incremental ?? []);

/** The operation log lines since the test began. */
const operationLines = (): LogLine[] => log.lines.filter((line) => line.msg === 'operation');

describe('the directives', () => {
  it('schema.graphql declares @defer and @stream for clients and their tools', () => {
    const sdl = readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8');
    const declared = buildSchema(sdl);
    expect(declared.getDirective('defer')?.locations).toEqual([
      'FRAGMENT_SPREAD',
      'INLINE_FRAGMENT',
    ]);
    expect(declared.getDirective('stream')?.args.map((arg) => arg.name)).toEqual([
      'if',
      'label',
      'initialCount',
    ]);
  });

  it('@stream on a field that is not a list is refused before anything runs', async () => {
    const answer = await stack.gql(
      `{ fundingEvents(first: 1) @stream { edges { node { round } } } }`,
      {},
      { headers: NO_CACHE },
    );
    expect(answer.errors).toEqual([
      expect.objectContaining({
        message: expect.stringContaining('Stream directive cannot be used on non-list field'),
        extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
      }),
    ]);
    expect(spentOn(stack.sandbox).requests).toBe(0);
  });
});

describe('@defer over multipart/mixed', () => {
  it('Apollo Client: the rounds first, then each company at its round, the last payload saying so; whole, the answer without @defer', async () => {
    const { client, received } = apollo({ ...demo(), ...NO_CACHE });
    const result = await client.query({ query: gql(ROUNDS_THEN_MOVES), fetchPolicy: 'no-cache' });

    const [first, ...rest] = received.map(({ payload }) => payload);
    expect(first!.hasNext).toBe(true);
    const edges = first!.data!['fundingEvents'].edges as { node: Record<string, unknown> }[];
    expect(edges).toHaveLength(3);
    for (const { node } of edges) expect(node).not.toHaveProperty('company');
    expect(rest.map((payload) => payload.hasNext)).toEqual([
      ...rest.slice(1).map(() => true),
      false,
    ]);
    const parts = partsOf(received);
    expect(parts.map((part) => part.path).sort()).toEqual(
      [0, 1, 2].map((index) => ['fundingEvents', 'edges', index, 'node']),
    );
    for (const part of parts) {
      expect(part.label).toBe('moves');
      expect(part.errors).toBeUndefined();
      expect(part.data!['company'].execMoves.nodes.length).toBeGreaterThan(0);
    }

    const whole = await stack.gql(ROUNDS_WITH_MOVES);
    expect(whole.errors).toBeUndefined();
    expect(untyped(result.data)).toEqual(whole.data);
  });

  it('the first payload of a two-level query waits for no deferred level: one upstream round trip, not two', async () => {
    stack.sandbox.setLatency({ fixedMs: 50 });
    const { client, received } = apollo({ ...demo(), ...NO_CACHE });
    await client.query({ query: gql(ROUNDS_THEN_MOVES), fetchPolicy: 'no-cache' });

    // The round list, then three companies' moves, all sent at once when the list came back.
    const requests = stack.sandbox.requestLog();
    expect(requests.map((request) => request.endpoint)).toEqual([
      '/v1/funding-events',
      ...Array(3).fill('/v1/exec-moves'),
    ]);
    const answeredBy = (at: number) =>
      requests.filter((request) => request.at + request.serverMs + 50 <= at).length;
    expect(answeredBy(received[0]!.at)).toBe(1);
    expect(answeredBy(received.at(-1)!.at)).toBe(4);
  });

  it('credits: each payload what was spent so far, the last the totals, equal to what the service charged; one log line and one count in the metrics', async () => {
    const metrics = () => scrape(`${stack.origin}/metrics`);
    const counted = async () =>
      valueOf(await metrics(), 'gateway_operations_total', { operation: 'RoundsThenMoves' });
    const before = await counted();
    const { client, received } = apollo({ ...demo(), ...NO_CACHE });
    await client.query({ query: gql(ROUNDS_THEN_MOVES), fetchPolicy: 'no-cache' });

    const spent = spentOn(stack.sandbox);
    const used = received.map(({ payload }) => payload.extensions!['credits'].used as number);
    expect(used).toEqual([...used].sort((a, b) => a - b));
    const last = received.at(-1)!.payload;
    expect(last).toEqual({
      hasNext: false,
      extensions: {
        credits: {
          used: spent.credits,
          saved: 0,
          remaining: expect.any(Number),
          estimate: 9,
          budget: 1000,
        },
        upstreamRequests: spent.requests,
        upstreamRetries: 0,
      },
    });

    await eventually(() => operationLines().length === 1, 5_000, 'the operation line');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(operationLines()).toEqual([
      expect.objectContaining({
        operation: 'RoundsThenMoves',
        type: 'query',
        status: 200,
        outcome: 'ok',
        creditsUsed: spent.credits,
        upstreamRequests: spent.requests,
      }),
    ]);
    expect((await counted()) - before).toBe(1);
  });

  it('urql: its result grows as the parts arrive, and the last says what the operation cost', async () => {
    const client = new Client({
      url: stack.url,
      exchanges: [fetchExchange],
      fetchOptions: { headers: { ...demo(), ...NO_CACHE } },
      requestPolicy: 'network-only',
    });
    const results: { hasNext: boolean; companies: number; credits: any }[] = [];
    await new Promise<void>((resolve) => {
      // Not unsubscribed at the last result: that would abort the response's last bytes.
      client.query(ROUNDS_THEN_MOVES, {}).subscribe((result) => {
        expect(result.error).toBeUndefined();
        const edges = result.data.fundingEvents.edges as { node: { company?: unknown } }[];
        results.push({
          hasNext: result.hasNext,
          companies: edges.filter(({ node }) => node.company).length,
          credits: result.extensions?.['credits'],
        });
        if (!result.hasNext) resolve();
      });
    });
    expect(results[0]).toMatchObject({ hasNext: true, companies: 0 });
    expect(results.at(-1)).toMatchObject({ hasNext: false, companies: 3 });
    expect(results.at(-1)!.credits.used).toBe(spentOn(stack.sandbox).credits);
  });

  it('the page cache serves deferred parts: what another query fetched costs nothing again', async () => {
    const key = newKey();
    const whole = await stack.gql(ROUNDS_WITH_MOVES, {}, { key });
    const paid = whole.extensions!.credits.used;
    const requests = spentOn(stack.sandbox).requests;
    const { client, received } = apollo({ 'x-api-key': key });
    await client.query({ query: gql(ROUNDS_THEN_MOVES), fetchPolicy: 'no-cache' });
    expect(spentOn(stack.sandbox).requests).toBe(requests);
    expect(partsOf(received)).toHaveLength(3);
    expect(received.at(-1)!.payload.extensions!['credits']).toMatchObject({ used: 0, saved: paid });
  });
});

describe('@stream', () => {
  it('over multipart/mixed (Apollo Client): each round and each investor at its index, after the first; whole, the answer without @stream', async () => {
    const { client, received } = apollo({ ...demo(), ...NO_CACHE });
    const result = await client.query({ query: gql(STREAMED_ROUNDS), fetchPolicy: 'no-cache' });
    const first = received[0]!.payload;
    expect(first.data!['fundingEvents'].edges).toHaveLength(1);
    expect(first.data!['fundingEvents'].edges[0].node.investors).toEqual([]);

    const rounds = partsOf(received).filter((part) => part.path.length === 3);
    expect(rounds.map((part) => part.path)).toEqual(
      [1, 2, 3].map((index) => ['fundingEvents', 'edges', index]),
    );
    const whole = await stack.gql(STREAMED_ROUNDS.replaceAll(/ @stream(\([^)]*\))?/g, ''));
    expect(untyped(result.data)).toEqual(whole.data);
    const investors = partsOf(received).filter((part) => part.path.at(-2) === 'investors');
    const listed = whole.data.fundingEvents.edges.flatMap(
      (edge: { node: { investors: unknown[] } }, round: number) =>
        edge.node.investors.map((_, index) => [
          'fundingEvents',
          'edges',
          round,
          'node',
          'investors',
          index,
        ]),
    );
    expect(investors.map((part) => part.path).sort()).toEqual(listed.sort());
    expect(received.at(-1)!.payload.hasNext).toBe(false);
  });

  it('over an event stream (graphql-sse): the same payloads, the last with the totals', async () => {
    const streamed = subscribeSse(stack.url, STREAMED_ROUNDS, { ...demo(), ...NO_CACHE });
    expect(await streamed.ended).toBeUndefined();
    const payloads = streamed.payloads as Received['payload'][];
    expect(payloads[0]).toMatchObject({ hasNext: true });
    expect(payloads[0]!.data!['fundingEvents'].edges).toHaveLength(1);
    const rounds = payloads
      .flatMap((payload) => payload.incremental ?? [])
      .filter((part) => part.path.length === 3);
    expect(rounds.map((part) => part.path)).toEqual(
      [1, 2, 3].map((index) => ['fundingEvents', 'edges', index]),
    );
    const last = payloads.at(-1)!;
    expect(last.hasNext).toBe(false);
    expect(last.extensions!['credits'].used).toBe(spentOn(stack.sandbox).credits);
    expect(last.extensions!['upstreamRequests']).toBe(spentOn(stack.sandbox).requests);
  });
});

describe('a client that does not ask for an answer in parts', () => {
  it.each([
    ['application/graphql-response+json, application/json'],
    ['application/json'],
    ['*/*'],
    [null],
  ])('Accept %s: the whole answer, as without the directives', async (accept) => {
    const response = await fetch(stack.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(accept ? { accept } : {}),
        ...demo(),
        ...NO_CACHE,
      },
      body: JSON.stringify({ query: ROUNDS_THEN_MOVES }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/json/);
    const answer = (await response.json()) as { data: unknown; errors?: unknown; extensions: any };
    const whole = await stack.gql(ROUNDS_WITH_MOVES, {}, { headers: NO_CACHE });
    expect(answer.errors).toBeUndefined();
    expect(answer.data).toEqual(whole.data);
    expect(answer.extensions.credits.used).toBe(whole.extensions!.credits.used);
  });
});

describe('a budget spent inside a deferred part', () => {
  /** A company whose newest round has more investors than the estimate assumes (3). */
  async function companyWithManyInvestors(): Promise<string> {
    const listed = await stack.gql(
      `{ fundingEvents(first: 300) { nodes { company { uuid } investors { uuid } } } }`,
    );
    for (const round of listed.data.fundingEvents.nodes) {
      if ((round.investors?.length ?? 0) < 5) continue;
      const newest = await stack.gql(
        `query ($c: ID!) { fundingEvents(first: 1, companyId: $c) { nodes { investors { uuid } } } }`,
        { c: round.company.uuid },
      );
      if (newest.data.fundingEvents.nodes[0].investors.length >= 5) return round.company.uuid;
    }
    throw new Error('no company whose newest round has five investors');
  }

  const INVESTORS = `query Investors($company: ID!) {
    fundingEvents(first: 1, companyId: $company) { nodes { round
      investors { id name ... @defer(label: "details") { type } } } }
  }`;

  it('answers CREDIT_BUDGET_EXHAUSTED at each path it could not pay for; what was paid is delivered, and the totals are what the service charged', async () => {
    const company = await companyWithManyInvestors();
    const estimated = await stack.gql(
      INVESTORS,
      { company },
      { headers: { 'x-credit-estimate': 'only' } },
    );
    const budget = (estimated.extensions!.credits as Record<string, unknown>)['estimate'] as number;
    expect(budget).toBe(4);
    stack.sandbox.reset();

    const { client, received } = apollo({
      ...demo(),
      ...NO_CACHE,
      'x-credit-budget': String(budget),
    });
    const result = await client.query<{ fundingEvents: any }>({
      query: gql(INVESTORS),
      variables: { company },
      fetchPolicy: 'no-cache',
      errorPolicy: 'all',
    });

    const investors = result.data!.fundingEvents.nodes[0].investors as {
      name: string;
      type: string | null;
    }[];
    expect(investors.length).toBeGreaterThanOrEqual(5);
    for (const investor of investors) expect(investor.name).toEqual(expect.any(String));
    const parts = partsOf(received);
    expect(parts).toHaveLength(investors.length);
    const paid = parts.filter((part) => !part.errors);
    const refused = parts.filter((part) => part.errors);
    // The round's list is paid first; its investors share the rest (a lookup usually costs one).
    expect(paid.length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    for (const part of paid) expect(part.data!['type']).toEqual(expect.any(String));
    for (const part of refused) {
      expect(part.data).toMatchObject({ type: null });
      expect(part.errors).toEqual([
        expect.objectContaining({
          path: [...part.path, 'type'],
          message: expect.stringContaining(`has spent its credit budget (${budget})`),
          extensions: expect.objectContaining({ code: 'CREDIT_BUDGET_EXHAUSTED' }),
        }),
      ]);
    }
    const typed = investors.filter((investor) => investor.type !== null);
    expect(typed).toHaveLength(paid.length);

    const spent = spentOn(stack.sandbox);
    expect(spent.credits).toBe(budget);
    expect(received.at(-1)!.payload.extensions!['credits']).toMatchObject({
      used: budget,
      budget,
      estimate: budget,
    });
    // The estimate asked first, then the run.
    const runs = () => operationLines().filter((line) => line['operation'] === 'Investors');
    await eventually(() => runs().length === 2, 5_000, 'the run reported');
    expect(runs()[1]).toMatchObject({
      outcome: 'partial',
      codes: ['CREDIT_BUDGET_EXHAUSTED'],
      creditsUsed: budget,
    });
  });
});

describe('the quota', () => {
  // A quota for every caller: its bucket is reserved before an operation runs, settled after.
  const QUOTA: Partial<Config> = { creditQuota: { credits: 1000, windowSeconds: 86_400 } };
  let quoted: Gateway;
  beforeAll(async () => {
    quoted = await startGateway(stack.sandbox, { config: QUOTA, logger: log.logger });
  });
  afterAll(() => quoted?.close());

  /** POSTs `query` to the quoted gateway as Apollo Client does (in parts), with `key`. */
  function post(query: string, key: string, signal: AbortSignal) {
    return fetch(quoted.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'multipart/mixed;deferSpec=20220824,application/json',
        'x-api-key': key,
        ...NO_CACHE,
      },
      body: JSON.stringify({ query }),
      signal,
    });
  }

  /** The bucket's credits left, as a plain query to the quoted gateway reports them. */
  async function quotaLeft(key: string): Promise<number> {
    const answer = await quoted.gql(`{ __typename }`, {}, { key });
    return (answer.extensions!.credits as { quota?: { remaining: number } }).quota!.remaining;
  }

  it('is settled to what the service charged for every part: the last payload says what is left', async () => {
    const key = newKey();
    const { client, received } = apollo({ 'x-api-key': key, ...NO_CACHE }, quoted.url);
    await client.query({ query: gql(ROUNDS_THEN_MOVES), fetchPolicy: 'no-cache' });
    const charged = spentOn(stack.sandbox).credits;
    expect(charged).toBeGreaterThan(0);
    const last = received.at(-1)!.payload;
    expect(last.hasNext).toBe(false);
    expect(last.extensions!['credits']).toMatchObject({
      used: charged,
      quota: { limit: 1000, remaining: 1000 - charged },
    });
    expect(await quotaLeft(key)).toBe(1000 - charged);
  });

  it('a client that goes away after the first payload: its operation is reported once, and settled to no less than the service charged', async () => {
    const key = newKey();
    stack.sandbox.setLatency({ fixedMs: 150 });
    const controller = new AbortController();
    const response = await post(ROUNDS_THEN_MOVES, key, controller.signal);
    const reader = response.body!.getReader();
    let read = '';
    while (!read.includes('"hasNext":true')) {
      const chunk = await reader.read();
      if (chunk.done) break;
      read += new TextDecoder().decode(chunk.value);
    }
    controller.abort();
    const lines = () => operationLines().filter((line) => line['operation'] === 'RoundsThenMoves');
    await eventually(() => lines().length === 1, 5_000, 'the operation reported');
    stack.sandbox.setLatency({ fixedMs: 0 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(lines()).toHaveLength(1);
    // The pages in flight were charged by the service: booked as what it may have charged.
    const charged = spentOn(stack.sandbox).credits;
    const [line] = lines() as (LogLine & { creditsUsed: number; creditsUncertain?: number })[];
    expect(line!.creditsUsed + (line!.creditsUncertain ?? 0)).toBeGreaterThanOrEqual(charged);
    expect(await quotaLeft(key)).toBeLessThanOrEqual(1000 - charged);
  });
});

describe('repeat views of an answer in parts', () => {
  it('its whole answer is kept once sent, and a repeat that asks alike gets it in one payload, nothing sent upstream', async () => {
    const key = newKey();
    const ran = apollo({ 'x-api-key': key });
    const first = await ran.client.query({
      query: gql(ROUNDS_THEN_MOVES),
      fetchPolicy: 'no-cache',
    });
    const totals = ran.received.at(-1)!.payload.extensions!['credits'];
    await eventually(() => operationLines().length === 1, 5_000, 'the run reported');
    const requests = spentOn(stack.sandbox).requests;

    const repeat = apollo({ 'x-api-key': key });
    const again = await repeat.client.query({
      query: gql(ROUNDS_THEN_MOVES),
      fetchPolicy: 'no-cache',
    });
    expect(again.data).toEqual(first.data);
    expect(repeat.received).toHaveLength(1);
    expect(repeat.received[0]!.payload).toMatchObject({
      hasNext: false,
      extensions: { credits: { used: 0, saved: totals.used + totals.saved } },
    });
    expect(spentOn(stack.sandbox).requests).toBe(requests);
    await eventually(() => operationLines().length === 2, 5_000, 'the repeat reported');
    expect(operationLines()[1]).toMatchObject({ door: 'answer', answered: true });
  });

  it('over an event stream too', async () => {
    const key = newKey();
    const ran = subscribeSse(stack.url, ROUNDS_THEN_MOVES, { 'x-api-key': key });
    expect(await ran.ended).toBeUndefined();
    await eventually(() => operationLines().length === 1, 5_000, 'the run reported');
    const requests = spentOn(stack.sandbox).requests;

    const repeat = subscribeSse(stack.url, ROUNDS_THEN_MOVES, { 'x-api-key': key });
    expect(await repeat.ended).toBeUndefined();
    expect(repeat.payloads).toHaveLength(1);
    const [whole] = repeat.payloads as Received['payload'][];
    expect(whole!.hasNext).toBe(false);
    const plain = await stack.gql(ROUNDS_WITH_MOVES, {}, { key });
    expect(whole!.data).toEqual(plain.data);
    expect(spentOn(stack.sandbox).requests).toBe(requests);
  });
});
