import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { get, SMALL_SIZES, type ErrorBody } from './sandbox-client.js';

let sandbox: Sandbox;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, quiet: true, sizes: SMALL_SIZES });
});
afterAll(async () => {
  await sandbox?.close();
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function expectError(
  reply: { status: number; body: ErrorBody },
  status: number,
  code: string,
  message?: RegExp,
): void {
  expect(reply.status).toBe(status);
  expect(reply.body.success).toBe(false);
  expect(reply.body.error.code).toBe(code);
  expect(reply.body.error.message).toEqual(expect.any(String));
  if (message) expect(reply.body.error.message).toMatch(message);
  expect(reply.body.meta.requestId).toMatch(UUID);
}

describe('authentication and policy errors', () => {
  it('answers UNAUTHORIZED (401) for a missing or unknown key, without echoing it', async () => {
    expectError(
      await get<ErrorBody>(sandbox, '/v1/companies', {}, null),
      401,
      'UNAUTHORIZED',
      /missing/,
    );
    const unknown = await get<ErrorBody>(sandbox, '/v1/companies', {}, 'sk-not-a-real-key');
    expectError(unknown, 401, 'UNAUTHORIZED', /invalid API key/);
    expect(unknown.body.error.message).not.toContain('sk-not-a-real-key');
  });

  it('answers FORBIDDEN (403) for the blocked key, before validating', async () => {
    expectError(
      await get<ErrorBody>(sandbox, '/v1/companies', { limit: 0 }, sandbox.keys.blocked),
      403,
      'FORBIDDEN',
    );
  });

  it('answers PAYMENT_REQUIRED (402) for the no-credit key, after validating', async () => {
    expectError(
      await get<ErrorBody>(sandbox, '/v1/investors', {}, sandbox.keys.noCredit),
      402,
      'PAYMENT_REQUIRED',
    );
    expectError(
      await get<ErrorBody>(sandbox, '/v1/investors', { limit: 0 }, sandbox.keys.noCredit),
      400,
      'INVALID_INPUT',
    );
  });

  it('answers TOO_MANY_REQUESTS (429) with Retry-After over the rate limit, per workspace', async () => {
    sandbox.reset();
    const key = sandbox.keys.rateLimited;
    const replies = [];
    for (let i = 0; i < 4; i++)
      replies.push(await get<ErrorBody>(sandbox, '/v1/companies', { limit: 1 }, key));
    expect(replies.map((r) => r.status)).toEqual([200, 200, 429, 429]);
    const limited = replies[2] as (typeof replies)[number];
    expectError(limited, 429, 'TOO_MANY_REQUESTS', /rate limit/);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await get(sandbox, '/v1/companies', { limit: 1 })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1050));
    expect((await get(sandbox, '/v1/companies', { limit: 1 }, key)).status).toBe(200);
  });

  it('checks the rate limit before validation', async () => {
    sandbox.addKey('one-per-second', { ratePerSecond: 1 });
    expect((await get(sandbox, '/v1/companies', { limit: 1 }, 'one-per-second')).status).toBe(200);
    expectError(
      await get<ErrorBody>(sandbox, '/v1/companies', { limit: 0 }, 'one-per-second'),
      429,
      'TOO_MANY_REQUESTS',
    );
  });
});

describe('routing errors', () => {
  it('answers NOT_FOUND (404) for unknown paths and METHOD_NOT_ALLOWED (405) for non-GET', async () => {
    expectError(await get<ErrorBody>(sandbox, '/v1/people'), 404, 'NOT_FOUND');
    expectError(await get<ErrorBody>(sandbox, '/v1/companies/'), 404, 'NOT_FOUND');
    expectError(await get<ErrorBody>(sandbox, '/__sandbox/log'), 404, 'NOT_FOUND');
    const res = await fetch(`${sandbox.url}/v1/companies`, {
      method: 'POST',
      headers: { 'X-API-Key': 'demo-key' },
    });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET');
    expect(((await res.json()) as ErrorBody).error.code).toBe('METHOD_NOT_ALLOWED');
  });
});

describe('INVALID_INPUT (400) names the parameter and the rule', () => {
  const cases: [string, string, RegExp][] = [
    ['/v1/companies', 'limit=0', /^limit must be an integer between 1 and 100 \(got "0"\)$/],
    ['/v1/companies', 'limit=101', /^limit must be an integer between 1 and 100 \(got "101"\)$/],
    ['/v1/companies', 'limit=2.5', /^limit must be an integer/],
    ['/v1/companies', 'limit=abc', /^limit must be an integer/],
    ['/v1/companies', 'limit=', /^limit must be an integer/],
    ['/v1/companies', 'limit=5&limit=6', /^limit must be given at most once/],
    ['/v1/companies', 'cursor=', /^cursor must not be empty/],
    ['/v1/companies', 'since=yesterday', /^since must be an ISO-8601 timestamp/],
    ['/v1/companies', 'since=2024-02-30', /^since must be an ISO-8601 timestamp/],
    ['/v1/companies', 'since=2024-01-01T25:00:00Z', /^since must be an ISO-8601 timestamp/],
    ['/v1/exec-moves', 'until=1700000000', /^until must be an ISO-8601 timestamp/],
    ['/v1/companies', 'foundedYearMin=-1', /^foundedYearMin must be an integer >= 0 \(got "-1"\)$/],
    ['/v1/companies', 'foundedYearMax=19x', /^foundedYearMax must be an integer/],
    ['/v1/companies', 'foundedYearMin=2000.5', /^foundedYearMin must be an integer/],
    ['/v1/acquisitions', 'minAmountUsd=-5', /^minAmountUsd must be a number >= 0/],
    ['/v1/acquisitions', 'maxAmountUsd=lots', /^maxAmountUsd must be a number/],
    ['/v1/funding-events', 'minAmountUsd=0x10', /^minAmountUsd must be a number/],
    ['/v1/funding-events', 'maxAmountUsd=-0.01', /^maxAmountUsd must be a number >= 0/],
    ['/v1/acquisitions', 'isMerger=yes', /^isMerger must be true or false \(got "yes"\)$/],
    ['/v1/acquisitions', 'isMerger=TRUE', /^isMerger must be true or false/],
    ['/v1/acquisitions', 'companyId=42', /^companyId must be a UUID \(got "42"\)$/],
    ['/v1/exec-moves', 'personId=not-a-uuid', /^personId must be a UUID/],
    ['/v1/funding-events', 'companyId=1234', /^companyId must be a UUID/],
    ['/v1/funding-events', 'country=US&country=DE', /^country must be given at most once/],
    ['/v1/companies', 'search=', /^search must not be empty/],
    ['/v1/companies', 'search=%20%20', /^search must contain at least one keyword/],
    ['/v1/investors', 'type=,', /^type must not be empty/],
    ['/v1/investors', 'apiKey=x', /^unknown parameter "apiKey"/],
    [
      '/v1/companies',
      'round=seed',
      /^unknown parameter "round" \(allowed: cursor, limit, since, search/,
    ],
    ['/v1/funding-events', 'until=2024-01-01', /^unknown parameter "until"/],
  ];
  it.each(cases)('%s?%s', async (path, query, message) => {
    expectError(await get<ErrorBody>(sandbox, path, query), 400, 'INVALID_INPUT', message);
  });

  it('accepts every documented timestamp form and decimal amounts', async () => {
    for (const since of [
      '2024-01-02T03:04:05.678Z',
      '2024-01-02T03:04:05Z',
      '2024-01-02T03:04:05+02:00',
      '2024-01-02',
    ]) {
      expect((await get(sandbox, '/v1/funding-events', { since, limit: 1 })).status, since).toBe(
        200,
      );
    }
    expect(
      (
        await get(sandbox, '/v1/funding-events', {
          minAmountUsd: '0.5',
          maxAmountUsd: '1e9',
          limit: 1,
        })
      ).status,
    ).toBe(200);
  });

  it('charges no credits for a rejected request', async () => {
    sandbox.addKey('validation-credits', { credits: 10 });
    await get(sandbox, '/v1/companies', { limit: 1000 }, 'validation-credits');
    expect(sandbox.credits('validation-credits')).toBe(10);
  });
});
