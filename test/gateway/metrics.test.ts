import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { endpoints, type EndpointName } from '../../src/upstream/endpoints.js';
import { SMALL_SIZES, startGateway, type Gateway, NO_CACHE } from '../helpers/start-stack.js';
import { scrape, valueOf, type Sample } from '../helpers/prometheus.js';

/** A key no label may ever show. */
const KEY = 'sk_live_METRICS_CANARY_7f3a9c';
const FUNDING = `query Funding($round: [String!]) {
  fundingEvents(first: 4, round: $round) { nodes { uuid company { name } } pageInfo { endCursor } }
}`;
const COMPANIES = `query Companies { companies(first: 5) { nodes { name } } }`;

let sandbox: Sandbox;
let gateway: Gateway;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, quiet: true, sizes: SMALL_SIZES });
  sandbox.addKey(KEY, { sameWorkspaceAs: sandbox.keys.demo });
});
afterAll(async () => {
  await gateway?.close();
  await sandbox?.close();
});
beforeEach(async () => {
  // A gateway of its own per test: counters start at zero.
  await gateway?.close();
  sandbox.reset();
  // Counts upstream requests and credits: every operation asks for fresh pages.
  gateway = await startGateway(sandbox, { headers: NO_CACHE });
});

const metrics = () => scrape(`${gateway.origin}/metrics`);

/** Requests and credits of the sandbox's log, by the gateway's endpoint name. */
function sandboxByEndpoint(): Map<EndpointName, { requests: number; credits: number }> {
  const byPath = new Map<string, EndpointName>(
    Object.entries(endpoints).map(([name, { path }]) => [path, name as EndpointName]),
  );
  const totals = new Map<EndpointName, { requests: number; credits: number }>();
  for (const entry of sandbox.requestLog()) {
    const name = byPath.get(entry.endpoint ?? '')!;
    const total = totals.get(name) ?? { requests: 0, credits: 0 };
    total.requests++;
    total.credits += entry.records;
    totals.set(name, total);
  }
  return totals;
}

describe('GET /metrics after known traffic', () => {
  it('counts operations by name and outcome, and upstream requests and credits as the sandbox logged them', async () => {
    for (let i = 0; i < 3; i++) {
      const response = await gateway.gql(FUNDING, { round: ['seed'] }, { key: KEY });
      expect(response.errors).toBeUndefined();
    }
    await gateway.gql(COMPANIES, undefined, { key: KEY });
    await gateway.gql(`{ companies(first: 2) { nodes { name } } }`, undefined, { key: KEY });
    const failed = await gateway.gql(COMPANIES, undefined, { key: 'no-such-key' });
    expect(failed.errors![0]!.extensions!.code).toBe('UNAUTHORIZED');

    const samples = await metrics();
    expect(
      valueOf(samples, 'gateway_operations_total', { operation: 'Funding', outcome: 'ok' }),
    ).toBe(3);
    expect(
      valueOf(samples, 'gateway_operations_total', { operation: 'Companies', outcome: 'ok' }),
    ).toBe(1);
    expect(
      valueOf(samples, 'gateway_operations_total', { operation: 'Companies', outcome: 'error' }),
    ).toBe(1);
    expect(
      valueOf(samples, 'gateway_operations_total', { operation: 'unnamed', outcome: 'ok' }),
    ).toBe(1);
    expect(valueOf(samples, 'gateway_operations_total')).toBe(6);
    expect(valueOf(samples, 'gateway_operation_duration_seconds_count')).toBe(6);
    expect(valueOf(samples, 'gateway_operation_errors_total', { code: 'UNAUTHORIZED' })).toBe(1);

    const logged = sandboxByEndpoint();
    expect([...logged.keys()].sort()).toEqual(['companies', 'fundingEvents']);
    for (const [endpoint, { requests, credits }] of logged) {
      expect(valueOf(samples, 'gateway_upstream_requests_total', { endpoint })).toBe(requests);
      expect(valueOf(samples, 'gateway_credits_used_total', { endpoint })).toBe(credits);
      expect(
        valueOf(samples, 'gateway_upstream_request_duration_seconds_count', { endpoint }),
      ).toBe(requests);
    }
    // 3 × 4 funding events, 5 + 2 companies: the 401 charged nothing.
    expect(valueOf(samples, 'gateway_credits_used_total')).toBe(12 + 7);
    expect(valueOf(samples, 'gateway_upstream_requests_total', { status: '2xx' })).toBe(5);
    expect(valueOf(samples, 'gateway_upstream_requests_total', { status: '4xx' })).toBe(1);
  });

  it('counts retries by reason, and budget rejections', async () => {
    sandbox.scriptFaults([{ kind: 'serverError', status: 503 }, { kind: 'drop' }]);
    const retried = await gateway.gql(COMPANIES);
    expect(retried.errors).toBeUndefined();
    const refused = await gateway.gql(COMPANIES, undefined, {
      headers: { 'x-credit-budget': '2' },
    });
    expect(refused.errors![0]!.extensions!.code).toBe('CREDIT_BUDGET_EXCEEDED');

    const samples = await metrics();
    expect(valueOf(samples, 'gateway_upstream_retries_total', { reason: '503' })).toBe(1);
    expect(valueOf(samples, 'gateway_upstream_retries_total', { reason: 'reset' })).toBe(1);
    expect(valueOf(samples, 'gateway_upstream_requests_total', { status: '5xx' })).toBe(1);
    expect(valueOf(samples, 'gateway_upstream_requests_total', { status: 'network' })).toBe(1);
    expect(valueOf(samples, 'gateway_upstream_requests_total', { status: '2xx' })).toBe(1);
    expect(valueOf(samples, 'gateway_upstream_requests_total')).toBe(sandbox.requestLog().length);
    expect(valueOf(samples, 'gateway_credit_budget_rejections_total', { reason: 'estimate' })).toBe(
      1,
    );
    expect(valueOf(samples, 'gateway_upstream_breaker_state')).toBe(0);
  });

  it('counts cache hits, misses, credits saved and the bytes held', async () => {
    await gateway.close();
    gateway = await startGateway(sandbox, { config: { cacheTtlSeconds: 60 } });
    // Three requests that differ in a byte (a trailing space), so that each runs rather than
    // being a repeat answered whole: the first fetches the page, the next two find it cached.
    for (let i = 0; i < 3; i++) await gateway.gql(COMPANIES + ' '.repeat(i));
    await gateway.gql(COMPANIES, undefined, { headers: { 'cache-control': 'no-cache' } });
    // An exact repeat: answered whole, counted apart from the page cache's hits.
    await gateway.gql(COMPANIES);

    const samples = await metrics();
    expect(valueOf(samples, 'gateway_answers_repeated_total')).toBe(1);
    expect(valueOf(samples, 'gateway_answers_repeated_credits_total')).toBe(5);
    expect(sandbox.requestLog()).toHaveLength(2);
    expect(valueOf(samples, 'gateway_page_cache_lookups_total', { result: 'miss' })).toBe(1);
    expect(valueOf(samples, 'gateway_page_cache_lookups_total', { result: 'hit' })).toBe(2);
    expect(
      valueOf(samples, 'gateway_credits_saved_total', { endpoint: 'companies', source: 'cache' }),
    ).toBe(10);
    expect(valueOf(samples, 'gateway_credits_used_total', { endpoint: 'companies' })).toBe(10);
    expect(valueOf(samples, 'gateway_page_cache_bytes')).toBeGreaterThan(500);
  });

  it('the breaker state and its transitions', async () => {
    await gateway.close();
    gateway = await startGateway(sandbox, {
      config: { breakerFailures: 2, breakerOpenMs: 60_000, upstreamRetries: 0 },
    });
    sandbox.setFaults({ serverError: 1 });
    for (let i = 0; i < 3; i++) await gateway.gql(COMPANIES);
    const samples = await metrics();
    expect(valueOf(samples, 'gateway_upstream_breaker_state')).toBe(2);
    expect(valueOf(samples, 'gateway_upstream_breaker_transitions_total', { state: 'open' })).toBe(
      1,
    );
    expect(valueOf(samples, 'gateway_upstream_requests_total', { status: '5xx' })).toBe(2);
    expect(
      valueOf(samples, 'gateway_operation_errors_total', { code: 'UPSTREAM_UNAVAILABLE' }),
    ).toBe(3);
  });
});

describe('label values', () => {
  it('never come from the request: no key, variable, cursor or document text; names are bounded', async () => {
    const first = await gateway.gql(FUNDING, { round: ['series_z_canary'] }, { key: KEY });
    expect(first.errors).toBeUndefined();
    const page = await gateway.gql(FUNDING, { round: ['seed'] }, { key: KEY });
    const cursor: string = page.data.fundingEvents.pageInfo.endCursor;
    await gateway.gql(
      `query Next($after: String) { fundingEvents(first: 2, after: $after) { nodes { uuid } } }`,
      { after: cursor },
      { key: KEY },
    );
    await gateway.gql(
      `{ companies(first: 1, domain: "canary-domain.example") { nodes { name } } }`,
    );
    // 250 distinct operation names: the first 200 become series, the rest share "other".
    for (let i = 0; i < 250; i++) {
      await gateway.gql(`query Op${i} { __typename }`);
    }
    // Not a GraphQL name: never a label.
    await gateway.gql(`{ __typename }`, undefined, { headers: {} });
    await fetch(gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY },
      body: JSON.stringify({ query: '{ __typename }', operationName: 'bad name {"x"}' }),
    });

    const response = await fetch(`${gateway.origin}/metrics`);
    const text = await response.text();
    for (const secret of [
      KEY,
      'series_z_canary',
      cursor,
      'canary-domain',
      'fundingEvents(first',
      'bad name',
    ]) {
      expect(text).not.toContain(secret);
    }
    const samples: Sample[] = (await metrics()).filter(
      (s) => s.name === 'gateway_operations_total',
    );
    const names = new Set(samples.map((s) => s.labels['operation']));
    expect(names.size).toBeLessThanOrEqual(200 + 2); // 200 names, unnamed, other
    expect(names.has('other')).toBe(true);
    expect(
      valueOf(samples, 'gateway_operations_total', { operation: 'other' }),
    ).toBeGreaterThanOrEqual(50);
  });
});
