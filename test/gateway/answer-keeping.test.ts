import { getIntrospectionQuery } from 'graphql';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { captureLog } from '../helpers/capture-log.js';
import {
  SMALL_SIZES,
  spentOn,
  startGateway,
  type Gateway,
  type GatewayOptions,
} from '../helpers/start-stack.js';

// Which answers are kept for repeat views (src/answers/), and what they may push out of the cache. The settings users run (the page
// cache on, its TTL of 60 s), unless a suite says which it changes and why.

const COMPANIES = `query Companies { companies(first: 3) { nodes { name domain } } }`;

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, quiet: true, sizes: SMALL_SIZES });
});
afterAll(() => sandbox?.close());

const gateways: Gateway[] = [];
async function gateway(options: GatewayOptions = {}) {
  const started = await startGateway(sandbox, options);
  gateways.push(started);
  return started;
}
beforeEach(() => sandbox.reset());
afterEach(async () => {
  await Promise.all(gateways.splice(0).map((started) => started.close()));
});

/** A key of its own for each test. */
let keys = 0;
function newKey(credits = 1_000_000): string {
  const key = `answer-keeping-key-${++keys}`;
  sandbox.addKey(key, { credits });
  return key;
}

/** The code of a response's first error. */
const codeOf = (response: { errors?: { extensions?: Record<string, unknown> }[] }) =>
  response.errors?.[0]?.extensions?.['code'];

/** POSTs the introspection query GraphiQL and codegen tools send, with `key`. */
async function introspect(gw: Gateway, key: string) {
  const response = await fetch(gw.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ query: getIntrospectionQuery() }),
  });
  return (await response.json()) as { data?: { __schema?: unknown } };
}

describe('only an answer the service accepted pages for, for that key, is kept', () => {
  it('an introspection (no page), or a key the service refuses, runs again each time', async () => {
    const log = captureLog('info');
    const gw = await gateway({ logger: log.logger });
    for (let i = 0; i < 2; i++) {
      expect((await introspect(gw, 'anon-1')).data?.__schema).toBeTruthy();
      expect(codeOf(await gw.gql(COMPANIES, {}, { key: 'anon-1' }))).toBe('UNAUTHORIZED');
    }
    const lines = log.lines.filter((line) => line.msg === 'operation');
    expect(lines).toHaveLength(4);
    expect(lines.filter((line) => line['answered'])).toEqual([]);
    // Each refused query was sent, and refused, again.
    expect(sandbox.requestLog().map((entry) => entry.status)).toEqual([401, 401]);
  });
});

describe('kept answers never push out pages (CACHE_MAX_MB=1 here, so that a few dozen answers would fill it)', () => {
  it("neither made-up keys nor one key's many answers make another key pay again for a page within its TTL", async () => {
    const gw = await gateway({ config: { cacheMaxMb: 1 } });
    // Key A pays for a 100-record page (some 130 KB of the service's JSON).
    const paid = await gw.gql(`query Paid { fundingEvents(first: 100) { nodes { uuid round } } }`);
    expect(paid.extensions!.credits).toMatchObject({ used: 100, saved: 0 });

    // 40 introspections (some 70 KB of answer each) under made-up keys, with no credit...
    for (let i = 0; i < 40; i++) {
      expect((await introspect(gw, `anon-${i}`)).data?.__schema).toBeTruthy();
    }
    // ...and 40 distinct answers (some 30 KB each) of key B, all from one page of B's.
    const b = newKey();
    for (let i = 0; i < 40; i++) {
      const many = await gw.gql(
        `query B${i} { fundingEvents(first: 100) { nodes { uuid round amountUsdCents company { name domain description } } } }`,
        {},
        { key: b },
      );
      expect(many.errors).toBeUndefined();
    }
    sandbox.reset();

    // A asks again for the same page in another operation (no kept answer can serve it): the
    // page cache does, for nothing.
    const again = await gw.gql(`query PaidAgain { fundingEvents(first: 100) { nodes { uuid } } }`);
    expect(again.errors).toBeUndefined();
    expect(again.extensions).toMatchObject({
      credits: { used: 0, saved: 100 },
      upstreamRequests: 0,
    });
    expect(spentOn(sandbox)).toEqual({ requests: 0, credits: 0 });
  });
});
