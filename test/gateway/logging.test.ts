import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { SMALL_SIZES, spentOn, startGateway, type Gateway } from '../helpers/start-stack.js';
import { captureLog } from '../helpers/capture-log.js';

/** Every key of this suite carries this: it must appear in no log line and no response. */
const CANARY = 'LOGCANARY';
const KEYS = {
  good: `sk_live_${CANARY}_good_91c2`,
  unknown: `sk_live_${CANARY}_unknown_0d4e`,
  noCredit: `sk_live_${CANARY}_nocredit_5a17`,
  blocked: `sk_live_${CANARY}_blocked_b803`,
  rateLimited: `sk_live_${CANARY}_rate_64fe`,
};
const LIST = `query List { fundingEvents(first: 3) { nodes { uuid company { name } } } }`;

let sandbox: Sandbox;
let gateway: Gateway;
const log = captureLog('debug');
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, quiet: true, sizes: SMALL_SIZES });
  sandbox.addKey(KEYS.good, { sameWorkspaceAs: sandbox.keys.demo });
  sandbox.addKey(KEYS.noCredit, { credits: 0 });
  sandbox.addKey(KEYS.blocked, { blocked: true });
  sandbox.addKey(KEYS.rateLimited, { ratePerSecond: 1 });
  gateway = await startGateway(sandbox, {
    logger: log.logger,
    // Every error path in a row: the breaker (its own suite) would open between them.
    config: {
      upstreamTimeoutMs: 300,
      retryAfterMaxMs: 0,
      operationTimeoutMs: 600,
      breakerFailures: 10_000,
    },
  });
});
afterAll(async () => {
  await gateway?.close();
  await sandbox?.close();
});
beforeEach(() => {
  sandbox.reset();
  log.lines.length = 0;
});

const operationLines = () => log.lines.filter((line) => line.msg === 'operation');

async function post(body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(gateway.url, {
    method: 'POST',
    // Every error path must reach the service: no page is served from the cache.
    headers: { 'content-type': 'application/json', 'cache-control': 'no-cache', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { response, text, headersText: JSON.stringify([...response.headers]) };
}

describe('one log line per operation', () => {
  it('with the request id, name, status, duration, upstream requests, credits and codes', async () => {
    const ok = await post({ query: LIST }, { 'x-api-key': KEYS.good, 'x-request-id': 'req-42' });
    const spent = spentOn(sandbox);
    const failed = await post({ query: LIST }, { 'x-api-key': KEYS.unknown });
    await post({ query: '{ fundingEvents(first: 3) { nope } }' });

    expect(ok.response.headers.get('x-request-id')).toBe('req-42');
    const madeId = failed.response.headers.get('x-request-id');
    expect(madeId).toMatch(/^[0-9a-f-]{36}$/);

    const lines = operationLines();
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatchObject({
      level: 'info',
      requestId: 'req-42',
      endpoint: '/graphql',
      operation: 'List',
      status: 200,
      outcome: 'ok',
      upstreamRequests: spent.requests,
      upstreamRetries: 0,
      creditsUsed: spent.credits,
      creditsSaved: 0,
      creditsEstimate: 3,
    });
    expect(lines[0]!['ms']).toEqual(expect.any(Number));
    expect(lines[0]).not.toHaveProperty('codes');
    expect(lines[1]).toMatchObject({
      requestId: madeId,
      operation: 'List',
      outcome: 'error',
      codes: ['UNAUTHORIZED'],
      upstreamRequests: 1,
      creditsUsed: 0,
    });
    expect(lines[2]).toMatchObject({
      operation: null,
      status: 200,
      outcome: 'error',
      codes: ['GRAPHQL_VALIDATION_FAILED'],
      upstreamRequests: 0,
    });
  });

  it('keeps a usable X-Request-Id and replaces one that is not', async () => {
    const long = 'x'.repeat(129);
    for (const sent of ['a b', long, 'quote"d']) {
      const { response } = await post({ query: '{ __typename }' }, { 'x-request-id': sent });
      expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    }
    expect(operationLines().map((line) => line.requestId)).not.toContain(long);
  });

  it('logs a failed upstream request once, with the service’s request id and no stack', async () => {
    sandbox.scriptFaults([{ kind: 'serverError', status: 500 }]);
    await post({ query: LIST }, { 'x-api-key': KEYS.good });
    const failures = log.lines.filter((line) => line.msg === 'upstream request failed');
    expect(failures).toEqual([
      expect.objectContaining({
        level: 'warn',
        endpoint: 'fundingEvents',
        status: 500,
        failure: 'status',
        upstreamRequestId: expect.any(String),
      }),
    ]);
    expect(log.lines.filter((line) => line.level === 'error')).toEqual([]);
  });
});

describe('the API key is never logged nor echoed', () => {
  it('on every error path: auth, credits, blocks, rate limits, faults, timeouts, budgets, bad input', async () => {
    const answers: string[] = [];
    const send = async (body: unknown, key?: string, headers: Record<string, string> = {}) => {
      const { text, headersText } = await post(body, {
        ...(key ? { 'x-api-key': key } : {}),
        ...headers,
      });
      answers.push(text, headersText);
      return text;
    };
    const codes = new Set<string>();
    const collect = (text: string) => {
      for (const error of (JSON.parse(text) as { errors?: { extensions?: { code?: string } }[] })
        .errors ?? []) {
        codes.add(error.extensions?.code ?? 'none');
      }
    };

    collect(await send({ query: LIST }, KEYS.unknown));
    collect(await send({ query: LIST }, undefined, { authorization: `Bearer ${KEYS.unknown}` }));
    collect(await send({ query: LIST }, KEYS.noCredit));
    collect(await send({ query: LIST }, KEYS.blocked));
    await Promise.all(
      [1, 2, 3].map(async () => collect(await send({ query: LIST }, KEYS.rateLimited))),
    );
    for (const fault of [
      { kind: 'serverError', status: 503 },
      { kind: 'drop' },
      { kind: 'malformed' },
      { kind: 'hang', ms: 1_000 },
    ] as const) {
      sandbox.scriptFaults([fault, fault, fault]);
      collect(await send({ query: LIST }, KEYS.good));
      sandbox.reset(); // a fault not retried (malformed) leaves the others queued
    }
    // Five pages of 250 ms one after the other: past the 600 ms deadline.
    sandbox.setLatency({ fixedMs: 250 });
    collect(await send({ query: `{ fundingEvents(first: 500) { nodes { uuid } } }` }, KEYS.good));
    sandbox.setLatency({ fixedMs: 0 });
    collect(await send({ query: LIST }, KEYS.good, { 'x-credit-budget': '1' }));
    collect(await send({ query: `{ fundingEvents(first: -1) { nodes { uuid } } }` }, KEYS.good));
    collect(await send({ query: '{ fundingEvents(' }, KEYS.good));
    collect(await send({ query: '{ nope }' }, KEYS.good));
    collect(
      await send(
        {
          query: 'query ($n: Int) { fundingEvents(first: $n) { nodes { uuid } } }',
          variables: { n: 'x' },
        },
        KEYS.good,
      ),
    );
    collect(await send('{"query": ', KEYS.good));
    const aliases = Array.from(
      { length: 25 },
      (_, n) => `c${n}: companies(first: 1) { nodes { name } }`,
    );
    collect(await send({ query: `{ ${aliases.join(' ')} }` }, KEYS.good));

    expect([...codes].sort()).toEqual(
      expect.arrayContaining([
        'UNAUTHORIZED',
        'PAYMENT_REQUIRED',
        'FORBIDDEN',
        'TOO_MANY_REQUESTS',
        'UPSTREAM_UNAVAILABLE',
        'OPERATION_TIMEOUT',
        'CREDIT_BUDGET_EXCEEDED',
        'INVALID_INPUT',
        'GRAPHQL_PARSE_FAILED',
        'GRAPHQL_VALIDATION_FAILED',
        'BAD_USER_INPUT',
        'BAD_REQUEST',
        'MAX_ALIASES_EXCEEDED',
      ]),
    );
    // The paths above were logged (an operation line each, upstream failures as warnings)...
    expect(operationLines().length).toBeGreaterThanOrEqual(18);
    expect(log.lines.some((line) => line.msg === 'upstream request failed')).toBe(true);
    // ... and not one line or answer holds a key.
    expect(log.text()).not.toContain(CANARY);
    for (const answer of answers) expect(answer).not.toContain(CANARY);
  });
});
