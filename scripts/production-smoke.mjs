/* global process, console, URL, fetch */
// The production install, once: `dist/` and the package files in a scratch directory, `npm ci
// --omit=dev` there, then `NODE_ENV=production node <npm start's flags> dist/main.js` (on the
// sandbox) answers a query, /healthz and /metrics, and exits 0 on SIGTERM. Proves that nothing
// needed at run time sits in devDependencies. Run after `npm run build`:
// `node scripts/production-smoke.mjs`.
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { startNodeFlags } from './start-flags.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function check(condition, message) {
  if (!condition) throw new Error(`production smoke: ${message}`);
  console.log(`ok: ${message}`);
}

const scratch = mkdtempSync(join(tmpdir(), 'gateway-production-'));
let child;
try {
  for (const entry of ['dist', 'package.json', 'package-lock.json']) {
    cpSync(join(ROOT, entry), join(scratch, entry), { recursive: true });
  }
  execFileSync('npm', ['ci', '--omit=dev', '--no-audit', '--no-fund'], {
    cwd: scratch,
    stdio: 'inherit',
  });
  for (const devOnly of ['typescript', 'tsx', 'vitest']) {
    let present = true;
    try {
      execFileSync('node', ['-e', `require.resolve('${devOnly}')`], {
        cwd: scratch,
        stdio: 'ignore',
      });
    } catch {
      present = false;
    }
    check(!present, `${devOnly} is not installed`);
  }

  const port = await freePort();
  const sandboxPort = await freePort();
  child = spawn(process.execPath, [...startNodeFlags(), 'dist/main.js'], {
    cwd: scratch,
    env: {
      PATH: process.env.PATH,
      NODE_ENV: 'production',
      PORT: String(port),
      SANDBOX_PORT: String(sandboxPort),
      HOST: '127.0.0.1',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  const origin = `http://127.0.0.1:${port}`;
  for (let waited = 0; ; waited += 100) {
    if (waited > 30_000 || child.exitCode !== null) throw new Error(`no start:\n${output}`);
    const up = await fetch(`${origin}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    await sleep(100);
  }
  check(true, 'node dist/main.js answers /healthz');

  const response = await fetch(`${origin}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'demo-key' },
    body: JSON.stringify({
      query: '{ fundingEvents(first: 3) { nodes { round company { name } } } }',
    }),
  });
  const body = await response.json();
  check(body.data?.fundingEvents?.nodes?.length === 3, 'a query answers 3 funding events');
  check(body.extensions?.credits?.used === 3, 'and reports 3 credits used');
  const metrics = await (await fetch(`${origin}/metrics`)).text();
  check(/^gateway_operations_total\{.*\} 1$/m.test(metrics), '/metrics counts the operation');
  // Lines reach stdout a moment after the response (held up to 10 ms to leave together).
  for (let waited = 0; waited < 2_000 && !/"msg":"operation"/.test(output); waited += 20) {
    await sleep(20);
  }
  check(/"msg":"operation"/.test(output), 'the operation was logged as a JSON line');
  check(
    !/demo-key"/.test(output.replace(/demo key \(public, local only\): demo-key/, '')),
    'no key in the log',
  );

  child.kill('SIGTERM');
  check((await exited) === 0, 'SIGTERM: exit 0');
} finally {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  rmSync(scratch, { recursive: true, force: true });
}
