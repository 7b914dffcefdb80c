import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { SMALL_SIZES } from '../helpers/start-stack.js';
import { parseMetrics, valueOf } from '../helpers/prometheus.js';
import {
  freePort,
  killGatewayProcesses,
  startGatewayProcess,
  type GatewayProcess,
} from '../helpers/start-process.js';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, quiet: true, sizes: SMALL_SIZES });
});
afterAll(async () => {
  killGatewayProcesses();
  await sandbox?.close();
});

/** `npm run dev`'s gateway in a process of its own, logging one line per operation. */
const startProcess = (env: Record<string, string>) =>
  startGatewayProcess({ UPSTREAM_URL: sandbox.url, LOG_LEVEL: 'info', ...env });

/**
 * The pid in the operation line the gateway logged for `requestId` (pino stamps every line with
 * its process's pid): which worker answered, read as an operator would.
 */
async function loggedPid(gateway: GatewayProcess, requestId: string): Promise<number> {
  for (const until = Date.now() + 3_000; Date.now() < until; await sleep(20)) {
    for (const line of gateway.output().split('\n')) {
      if (!line.includes(requestId)) continue;
      const entry = JSON.parse(line) as { requestId?: string; pid?: number };
      if (entry.requestId === requestId && entry.pid) return entry.pid;
    }
  }
  throw new Error(`no log line for request ${requestId}`);
}

/** One operation on a connection of its own; the pid of the worker that answered. */
async function pidOf(gateway: GatewayProcess): Promise<number> {
  const response = await request(`${gateway.origin}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-api-key': sandbox.keys.demo,
      connection: 'close',
    },
    body: JSON.stringify({ query: '{ companies(first: 2) { nodes { name } } }' }),
    reset: true,
    // A connection the primary hands to a worker as it dies is never answered.
    headersTimeout: 3_000,
    bodyTimeout: 3_000,
  });
  const body = (await response.body.json()) as { errors?: unknown };
  expect(body.errors).toBeUndefined();
  return loggedPid(gateway, String(response.headers['x-request-id']));
}

describe('WORKERS=2', () => {
  it('answers from two processes on one port, sums their metrics, replaces a worker that dies, and drains on SIGTERM', async () => {
    const metricsPort = await freePort();
    const gateway = await startProcess({ WORKERS: '2', METRICS_PORT: String(metricsPort) });
    try {
      // /healthz answers once the first worker listens; the second may still be booting.
      const pids = new Set<number>();
      let sent = 0;
      for (const until = Date.now() + 30_000; (pids.size < 2 || sent < 20) && Date.now() < until;) {
        pids.add(await pidOf(gateway));
        sent++;
      }
      expect(pids.size).toBe(2);
      expect(pids.has(gateway.child.pid!)).toBe(false);

      // The primary serves the sum of both workers on METRICS_PORT; the public port has none.
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      const samples = parseMetrics(text);
      expect(valueOf(samples, 'gateway_operations_total')).toBe(sent);
      // Each worker has its own page cache: each paid for the page once, and served it after
      // (from its pages, or as the whole answer of a repeat view).
      expect(valueOf(samples, 'gateway_credits_used_total', { endpoint: 'companies' })).toBe(2 * 2);
      const saved =
        valueOf(samples, 'gateway_credits_saved_total', { endpoint: 'companies' }) +
        valueOf(samples, 'gateway_answers_repeated_credits_total');
      expect(saved).toBe(2 * sent - 2 * 2);
      expect((await fetch(`${gateway.origin}/metrics`)).status).toBe(404);
      const [victim] = pids;
      process.kill(victim!, 'SIGKILL');
      const after = new Set<number>();
      // Its replacement boots in a few seconds; meanwhile the other worker answers.
      for (const until = Date.now() + 30_000; after.size < 2 && Date.now() < until;) {
        try {
          const pid = await pidOf(gateway);
          if (pid !== victim) after.add(pid);
        } catch {
          // the dying worker's connection
        }
        await sleep(50);
      }
      expect(after.size).toBe(2);
      const [replacement] = [...after].filter((pid) => !pids.has(pid));
      expect(replacement).toBeGreaterThan(0);
      expect(gateway.output()).toMatch(/worker died: starting another/);

      gateway.child.kill('SIGTERM');
      const [code] = await gateway.exited;
      expect(code).toBe(0);
    } finally {
      if (gateway.child.exitCode === null) gateway.child.kill('SIGKILL');
    }
  }, 60_000);

  it('one process with UPSTREAM_URL: /metrics off the public port unless METRICS=public', async () => {
    const kept = await startProcess({});
    const open = await startProcess({ METRICS: 'public' });
    const off = await startProcess({ METRICS: 'off' });
    try {
      await pidOf(open);
      expect((await fetch(`${kept.origin}/metrics`)).status).toBe(404);
      const samples = parseMetrics(await (await fetch(`${open.origin}/metrics`)).text());
      expect(valueOf(samples, 'gateway_operations_total')).toBe(1);
      expect(valueOf(samples, 'process_cpu_seconds_total')).toBeGreaterThan(0);
      expect((await fetch(`${off.origin}/metrics`)).status).toBe(404);
    } finally {
      for (const gateway of [kept, open, off]) gateway.child.kill('SIGTERM');
      await Promise.all([kept.exited, open.exited, off.exited]);
    }
  });

  it('refuses to boot in production on the built-in CURSOR_SECRET, naming it', async () => {
    const refused = await startProcess({ NODE_ENV: 'production' }).then(
      () => null,
      (error: Error) => error.message,
    );
    expect(refused).toMatch(/CURSOR_SECRET must be set with UPSTREAM_URL in production/);
    const secret = await startProcess({ NODE_ENV: 'production', CURSOR_SECRET: 'a-long-secret' });
    secret.child.kill('SIGTERM');
    expect((await secret.exited)[0]).toBe(0);
  });
});
