import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { get, SMALL_SIZES, type ErrorBody } from './sandbox-client.js';

let sandbox: Sandbox;

beforeAll(async () => {
  sandbox = await startSandbox({
    port: 0,
    quiet: true,
    sizes: SMALL_SIZES,
    controlsOverHttp: true,
  });
});
afterAll(async () => {
  await sandbox?.close();
});
beforeEach(() => {
  sandbox.reset();
});

describe('request log and counters', () => {
  it('records every request in order, with the workspace and never the key', async () => {
    const wsId = sandbox.addKey('secret-key-123', { credits: 50 });
    await get(sandbox, '/v1/funding-events', 'round=seed&round=series_a&limit=3', 'secret-key-123');
    await get(sandbox, '/v1/companies', { limit: 0 });
    await get(sandbox, '/v1/investors', 'apiKey=secret-key-123', null);
    await get(sandbox, '/v1/nothing');
    const log = sandbox.requestLog();
    expect(
      log.map((e) => [e.method, e.path, e.endpoint, e.workspace, e.status, e.code, e.records]),
    ).toEqual([
      ['GET', '/v1/funding-events', '/v1/funding-events', wsId, 200, null, 3],
      ['GET', '/v1/companies', '/v1/companies', 'ws_demo', 400, 'INVALID_INPUT', 0],
      ['GET', '/v1/investors', '/v1/investors', null, 401, 'UNAUTHORIZED', 0],
      ['GET', '/v1/nothing', null, null, 404, 'NOT_FOUND', 0],
    ]);
    expect(log[0]?.query).toBe('round=seed&round=series_a&limit=3');
    expect(log[0]?.params).toEqual({ round: ['seed', 'series_a'], limit: ['3'] });
    expect(log[0]?.at).toBeGreaterThan(Date.now() - 60_000);
    expect(JSON.stringify(log)).not.toContain('secret-key-123');
    expect(JSON.stringify(log)).not.toContain('demo-key');
    expect(sandbox.counters()).toEqual({
      requests: 4,
      records: 3,
      byEndpoint: { '/v1/funding-events': 1, '/v1/companies': 1, '/v1/investors': 1, unknown: 1 },
      byStatus: { '200': 1, '400': 1, '401': 1, '404': 1 },
    });
  });

  it("records a traced client's traceparent header, null without one", async () => {
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    await fetch(`${sandbox.url}/v1/companies?limit=1`, {
      headers: { 'x-api-key': sandbox.keys.demo, traceparent },
    });
    await get(sandbox, '/v1/companies', { limit: 1 });
    expect(sandbox.requestLog().map((entry) => entry.traceparent)).toEqual([traceparent, null]);
  });

  it('reset clears the log and counters and restores credits', async () => {
    await get(sandbox, '/v1/companies', { limit: 2 }, sandbox.keys.lowCredit);
    expect(sandbox.credits(sandbox.keys.lowCredit)).toBe(3);
    sandbox.reset();
    expect(sandbox.requestLog()).toEqual([]);
    expect(sandbox.counters()).toEqual({ requests: 0, records: 0, byEndpoint: {}, byStatus: {} });
    expect(sandbox.credits(sandbox.keys.lowCredit)).toBe(5);
  });

  it('revokeKey: the key gets 401 from then on, reset or not, until it is added again', async () => {
    sandbox.addKey('revoked-key-123', { credits: 50 });
    expect((await get(sandbox, '/v1/companies', { limit: 1 }, 'revoked-key-123')).status).toBe(200);
    sandbox.revokeKey('revoked-key-123');
    sandbox.reset();
    const refused = await get<ErrorBody>(sandbox, '/v1/companies', { limit: 1 }, 'revoked-key-123');
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('UNAUTHORIZED');
    // Still a key to the log: a query value equal to it is redacted.
    await get(sandbox, '/v1/companies', 'search=revoked-key-123');
    expect(sandbox.requestLog().at(-1)?.query).not.toContain('revoked-key-123');
    expect(() => sandbox.revokeKey('revoked-key-123')).toThrow();
    sandbox.addKey('revoked-key-123', { credits: 50 });
    expect((await get(sandbox, '/v1/companies', { limit: 1 }, 'revoked-key-123')).status).toBe(200);
  });
});

describe('latency', () => {
  it('delays answers by the fixed latency plus jitter, and reset removes it', async () => {
    sandbox.setLatency({ fixedMs: 120 });
    let started = performance.now();
    expect((await get(sandbox, '/v1/companies', { limit: 1 })).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(110);
    expect(sandbox.requestLog()[0]?.serverMs).toBeLessThan(100);
    sandbox.setLatency({ fixedMs: 0, jitterMs: 60 });
    started = performance.now();
    await Promise.all(
      Array.from({ length: 10 }, () => get(sandbox, '/v1/companies', { limit: 1 })),
    );
    const jittered = performance.now() - started;
    expect(jittered).toBeLessThan(1000);
    sandbox.reset();
    started = performance.now();
    await get(sandbox, '/v1/companies', { limit: 1 });
    expect(performance.now() - started).toBeLessThan(100);
  });

  it('rejects negative latency', () => {
    expect(() => sandbox.setLatency({ fixedMs: -1 })).toThrow(RangeError);
  });
});

describe('fault injection', () => {
  it('answers 500 INTERNAL_ERROR for the serverError share, charging nothing', async () => {
    sandbox.setFaults({ serverError: 1 });
    const reply = await get<ErrorBody>(
      sandbox,
      '/v1/companies',
      { limit: 5 },
      sandbox.keys.lowCredit,
    );
    expect(reply.status).toBe(500);
    expect(reply.body.error.code).toBe('INTERNAL_ERROR');
    expect(sandbox.credits(sandbox.keys.lowCredit)).toBe(5);
    expect(sandbox.requestLog()[0]).toMatchObject({
      status: 500,
      fault: 'serverError',
      records: 0,
    });
  });

  it('answers 429 with Retry-After: 1 for the tooManyRequests share', async () => {
    sandbox.setFaults({ tooManyRequests: 1 });
    const reply = await get<ErrorBody>(sandbox, '/v1/investors');
    expect(reply.status).toBe(429);
    expect(reply.headers.get('retry-after')).toBe('1');
    expect(reply.body.error.code).toBe('TOO_MANY_REQUESTS');
  });

  it('sends a body that is not valid JSON for the malformed share', async () => {
    sandbox.setFaults({ malformed: 1 });
    const res = await fetch(`${sandbox.url}/v1/companies`, {
      headers: { 'X-API-Key': sandbox.keys.demo },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    const text = await res.text();
    expect(() => JSON.parse(text) as unknown).toThrow(SyntaxError);
  });

  it('drops the connection for the drop share', async () => {
    sandbox.setFaults({ drop: 1 });
    await expect(
      fetch(`${sandbox.url}/v1/companies`, { headers: { 'X-API-Key': sandbox.keys.demo } }),
    ).rejects.toThrow();
    expect(sandbox.requestLog()[0]).toMatchObject({ status: 0, fault: 'drop' });
  });

  it('injects roughly the requested share, and none after reset', async () => {
    sandbox.setFaults({ serverError: 0.3 });
    const statuses = [];
    for (let i = 0; i < 200; i++)
      statuses.push((await get(sandbox, '/v1/companies', { limit: 1 })).status);
    const failures = statuses.filter((s) => s === 500).length;
    expect(failures).toBeGreaterThan(30);
    expect(failures).toBeLessThan(90);
    sandbox.reset();
    expect((await get(sandbox, '/v1/companies', { limit: 1 })).status).toBe(200);
  });

  it('applies to /v1 requests only, and rejects invalid shares', async () => {
    sandbox.setFaults({ serverError: 1 });
    expect((await fetch(`${sandbox.url}/__sandbox/counters`)).status).toBe(200);
    expect(() => sandbox.setFaults({ drop: 1.5 })).toThrow(RangeError);
    expect(() => sandbox.setFaults({ drop: 0.6, malformed: 0.6 })).toThrow(RangeError);
  });
});

describe('controls over HTTP', () => {
  it('exposes log, counters, reset, latency and faults when enabled', async () => {
    await get(sandbox, '/v1/companies', { limit: 2 });
    const log = (await (await fetch(`${sandbox.url}/__sandbox/log`)).json()) as {
      entries: { records: number }[];
    };
    expect(log.entries.map((e) => e.records)).toEqual([2]);
    const counters = (await (await fetch(`${sandbox.url}/__sandbox/counters`)).json()) as {
      requests: number;
    };
    expect(counters.requests).toBe(1);
    expect(
      (await fetch(`${sandbox.url}/__sandbox/faults?serverError=1`, { method: 'POST' })).status,
    ).toBe(200);
    expect((await get(sandbox, '/v1/companies')).status).toBe(500);
    expect(
      (await fetch(`${sandbox.url}/__sandbox/faults?serverError=2`, { method: 'POST' })).status,
    ).toBe(400);
    expect(
      (await fetch(`${sandbox.url}/__sandbox/latency?fixedMs=abc`, { method: 'POST' })).status,
    ).toBe(400);
    expect((await fetch(`${sandbox.url}/__sandbox/reset`, { method: 'POST' })).status).toBe(200);
    expect(sandbox.requestLog()).toEqual([]);
    expect((await get(sandbox, '/v1/companies')).status).toBe(200);
    expect(
      (await fetch(`${sandbox.url}/__sandbox/latency?fixedMs=80`, { method: 'POST' })).status,
    ).toBe(200);
    const started = performance.now();
    await get(sandbox, '/v1/companies', { limit: 1 });
    expect(performance.now() - started).toBeGreaterThanOrEqual(70);
  });
});

describe('startSandbox', () => {
  it('listens on an ephemeral port, keeps connections alive and closes cleanly', async () => {
    const other = await startSandbox({
      port: 0,
      quiet: true,
      sizes: SMALL_SIZES,
      latency: { fixedMs: 50 },
    });
    expect(other.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(other.url).not.toBe(sandbox.url);
    const res = await fetch(`${other.url}/v1/companies?limit=1`, {
      headers: { 'X-API-Key': 'demo-key' },
    });
    expect(res.headers.get('connection')).toBe('keep-alive');
    await res.text();
    const started = performance.now();
    await get(other, '/v1/companies', { limit: 1 });
    expect(performance.now() - started).toBeGreaterThanOrEqual(45);
    await other.close();
    await expect(fetch(`${other.url}/v1/companies`)).rejects.toThrow();
  });

  it('refuses duplicate keys and invalid sizes', async () => {
    expect(() => sandbox.addKey('demo-key')).toThrow();
    await expect(startSandbox({ port: 0, quiet: true, sizes: { companies: -1 } })).rejects.toThrow(
      RangeError,
    );
  });
});
