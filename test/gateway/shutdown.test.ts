import { setTimeout as sleep } from 'node:timers/promises';
import { connect } from 'node:net';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { SMALL_SIZES } from '../helpers/start-stack.js';
import { killGatewayProcesses, startGatewayProcess } from '../helpers/start-process.js';
const LIST = `{ fundingEvents(first: 3) { nodes { uuid } } }`;

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, quiet: true, sizes: SMALL_SIZES });
});
afterAll(async () => {
  killGatewayProcesses();
  await sandbox?.close();
});

/** The gateway as `npm run dev` runs it, in a process of its own, on a free port. */
const startProcess = (env: Record<string, string> = {}) =>
  startGatewayProcess({
    UPSTREAM_URL: sandbox.url,
    // Identical operations in flight must each reach the service: the cache would join them.
    CACHE_TTL_SECONDS: '0',
    SHUTDOWN_GRACE_MS: '5000',
    ...env,
  });

function post(url: string, dispatcher?: Agent) {
  return request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': sandbox.keys.demo },
    body: JSON.stringify({ query: LIST }),
    dispatcher,
  });
}

describe('graceful shutdown', () => {
  it('SIGTERM with 10 operations in flight: all 10 complete, and the process exits 0', async () => {
    sandbox.reset();
    sandbox.setLatency({ fixedMs: 400 });
    const gateway = await startProcess();
    try {
      const inFlight = Array.from({ length: 10 }, async () => {
        const response = await post(gateway.url);
        return { status: response.statusCode, body: (await response.body.json()) as any };
      });
      while (sandbox.requestLog().length < 10) await sleep(10);
      gateway.child.kill('SIGTERM');
      const answers = await Promise.all(inFlight);
      for (const answer of answers) {
        expect(answer.status).toBe(200);
        expect(answer.body.errors).toBeUndefined();
        expect(answer.body.data.fundingEvents.nodes).toHaveLength(3);
      }
      const [code] = await gateway.exited;
      expect(code).toBe(0);
      expect(gateway.output()).toMatch(
        /"signal":"SIGTERM".*"msg":"draining"[\s\S]*"signal":"SIGTERM".*"msg":"closed"/,
      );
    } finally {
      sandbox.setLatency({});
      gateway.child.kill('SIGKILL');
    }
  });

  it('a busy keep-alive client does not hold it open: Connection: close, then exit 0', async () => {
    sandbox.reset();
    // Each request takes 200 ms upstream, so that one is in flight when the signal comes.
    sandbox.setLatency({ fixedMs: 200 });
    const gateway = await startProcess();
    const agent = new Agent({ keepAliveTimeout: 60_000, connections: 1 });
    let stop = false;
    try {
      const closeHeaders: string[] = [];
      const client = (async () => {
        while (!stop) {
          try {
            const response = await post(gateway.url, agent);
            await response.body.text();
            if (response.headers.connection === 'close') closeHeaders.push('close');
          } catch {
            return; // the gateway no longer accepts: what shutdown should do
          }
        }
      })();
      // Signal right after the sandbox received a request of the client: it is in flight (200 ms).
      for (let waited = 0; sandbox.requestLog().length < 2; waited += 5) {
        if (waited > 10_000) throw new Error('the client sent nothing');
        await sleep(5);
      }
      const seen = sandbox.requestLog().length;
      while (sandbox.requestLog().length === seen) await sleep(1);
      const signalled = Date.now();
      gateway.child.kill('SIGTERM');
      const [code] = await gateway.exited;
      const tookMs = Date.now() - signalled;
      stop = true;
      await client;
      expect(code).toBe(0);
      // Well inside the 5 s grace: the kept-alive connection was closed after its response.
      expect(tookMs).toBeLessThan(5_000);
      expect(closeHeaders.length).toBeGreaterThanOrEqual(1);
    } finally {
      stop = true;
      sandbox.setLatency({});
      await agent.close();
      gateway.child.kill('SIGKILL');
    }
  });

  it("exits within the grace period when stdout's reader has stopped reading", async () => {
    // A supervisor that died with the pipe still open: nobody reads, the pipe fills, and every
    // further log line waits. 150 operations with 4,000-character names log some 600 KB.
    const gateway = await startProcess({ SHUTDOWN_GRACE_MS: '2000' });
    try {
      gateway.child.stdout!.pause();
      gateway.child.stderr!.pause();
      const name = `Q${'x'.repeat(4_000)}`;
      for (let i = 0; i < 150; i++) {
        const response = await request(gateway.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query: `query ${name} { __typename }` }),
          headersTimeout: 2_000,
        });
        expect(response.statusCode).toBe(200);
        await response.body.text();
      }
      const signalled = Date.now();
      gateway.child.kill('SIGTERM');
      const [code] = await gateway.exited;
      expect(code).toBe(0);
      expect(Date.now() - signalled).toBeLessThan(2_000 + 5_000);
    } finally {
      gateway.child.kill('SIGKILL');
    }
  });

  it('exits within the grace period while a client holds a half-sent body', async () => {
    const gateway = await startProcess({ SHUTDOWN_GRACE_MS: '1500' });
    const socket = connect(Number(new URL(gateway.origin).port), '127.0.0.1');
    try {
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write(
        'POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
          'Content-Length: 1000\r\n\r\n{"query":',
      );
      await sleep(200);
      const signalled = Date.now();
      gateway.child.kill('SIGTERM');
      const [code] = await gateway.exited;
      expect(code).toBe(0);
      // Closed at the end of the grace period, not held open by the client.
      expect(Date.now() - signalled).toBeLessThan(1_500 + 3_000);
    } finally {
      socket.destroy();
      gateway.child.kill('SIGKILL');
    }
  });
});
