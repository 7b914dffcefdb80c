// Allocation per request of the gateway, by module and by function: the pressure its garbage
// collector works against (issue 13). The sandbox and the gateway (`<dist>/main.js`, page cache off,
// with `--inspect`) run as processes; after a warm-up of 1,500 requests, V8's sampling heap profiler
// records every allocation, the objects already collected included, over N requests of one of
// bench/scenarios.ts's QUERIES (the 20-record list, every field, by default) at concurrency 8.
// Less noisy than CPU time on a shared machine: two runs of one build agree within 1%.
// CONCURRENCY=n loads at n instead; YOGA_FLOOR=1 profiles bench/yoga-floor-server.mjs in the
// gateway's place; SURVIVORS=1 leaves out what scavenges collected, so that what
// is left is what lived through one: what a scavenge copies.
//
//   [CONCURRENCY=8] [YOGA_FLOOR=1] [SURVIVORS=1] npm run bench:alloc -- [N=2000] [dist=dist] [list|wide|walk]
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { request, WebSocket } from 'undici';
import { QUERIES } from './scenarios.js';
import { startNodeFlags } from '../scripts/start-flags.mjs';

/** A node of V8's sampling heap profile. */
interface Node {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: Node[];
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const N = Number(process.argv[2] ?? 2000);
const DIST = process.argv[3] ?? 'dist';
const [SANDBOX, GATEWAY, INSPECTOR] = [4711, 4712, 4713];
const SCENARIO = (process.argv[4] ?? 'list') as keyof typeof QUERIES;
if (!QUERIES[SCENARIO]) throw new RangeError(`scenario: one of ${Object.keys(QUERIES).join(', ')}`);
const body = JSON.stringify({ query: QUERIES[SCENARIO] });
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 8);
const SURVIVORS = process.env.SURVIVORS === '1';
const SCRIPT = process.env.YOGA_FLOOR === '1' ? 'bench/yoga-floor-server.mjs' : `${DIST}/main.js`;

const sandbox = spawn(
  process.execPath,
  [`${DIST}/sandbox/main.js`, '--port', String(SANDBOX), '--quiet'],
  {
    cwd: ROOT,
    stdio: 'ignore',
  },
);
const FLAGS = process.env.YOGA_FLOOR === '1' ? [] : startNodeFlags();
const gateway = spawn(process.execPath, [...FLAGS, `--inspect=127.0.0.1:${INSPECTOR}`, SCRIPT], {
  cwd: ROOT,
  stdio: 'ignore',
  env: {
    ...process.env,
    NODE_ENV: 'production',
    PORT: String(GATEWAY),
    HOST: '127.0.0.1',
    UPSTREAM_URL: `http://127.0.0.1:${SANDBOX}`,
    CURSOR_SECRET: 'bench-cursor-secret',
    CACHE_TTL_SECONDS: '0',
  },
});
try {
  for (;;) {
    try {
      await fetch(`http://127.0.0.1:${SANDBOX}/v1/companies?limit=1`, {
        headers: { 'x-api-key': 'demo-key' },
      });
      await fetch(`http://127.0.0.1:${GATEWAY}/health`);
      break;
    } catch {
      await sleep(200);
    }
  }
  const [target] = (await (await fetch(`http://127.0.0.1:${INSPECTOR}/json/list`)).json()) as {
    webSocketDebuggerUrl: string;
  }[];
  const socket = new WebSocket(target!.webSocketDebuggerUrl);
  await new Promise((resolve) => socket.addEventListener('open', resolve, { once: true }));
  let nextId = 0;
  const pending = new Map<number, (result: unknown) => void>();
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as { id: number; result: unknown };
    pending.get(message.id)?.(message.result);
  });
  const send = (method: string, params = {}) =>
    new Promise<unknown>((resolve) => {
      const id = ++nextId;
      pending.set(id, resolve);
      socket.send(JSON.stringify({ id, method, params }));
    });
  const load = async (count: number) => {
    let sent = 0;
    const worker = async () => {
      while (sent < count) {
        sent++;
        const response = await request(`http://127.0.0.1:${GATEWAY}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': 'demo-key' },
          body,
        });
        await response.body.text();
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  };
  await load(1500);
  await send('HeapProfiler.enable');
  await send('HeapProfiler.startSampling', {
    samplingInterval: 4096,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: !SURVIVORS,
  });
  await load(N);
  const { profile } = (await send('HeapProfiler.stopSampling')) as { profile: { head: Node } };
  socket.close();
  // The whole profile, for Chrome DevTools (Memory > Load) or speedscope: callers, not only sites.
  mkdirSync(join(ROOT, '.bench-tmp'), { recursive: true });
  const saved = join(
    ROOT,
    '.bench-tmp',
    `alloc-${new Date().toISOString().replace(/[:.]/g, '-')}.heapprofile`,
  );
  writeFileSync(saved, JSON.stringify(profile));

  const byFunction = new Map<string, number>();
  const byModule = new Map<string, number>();
  let total = 0;
  const walk = (node: Node): void => {
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url.replace(/.*node_modules\//, '').replace(/.*\/dist\//, 'dist/');
    const module = url.includes('node_modules/')
      ? where
          .split('/')
          .slice(0, where.startsWith('@') ? 2 : 1)
          .join('/')
      : where.startsWith('dist/')
        ? where
        : where.startsWith('node:')
          ? 'node: (core)'
          : '(native)';
    total += node.selfSize;
    const fn = `${functionName || '(anonymous)'} ${where}:${lineNumber + 1}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + node.selfSize);
    byModule.set(module, (byModule.get(module) ?? 0) + node.selfSize);
    for (const child of node.children) walk(child);
  };
  walk(profile.head);
  const kb = (bytes: number) => `${(bytes / N / 1024).toFixed(1).padStart(7)} KB`;
  console.log(
    `${SURVIVORS ? 'surviving a scavenge' : 'allocated'} per request (${SCRIPT}, ${SCENARIO}, ${N} requests, c=${CONCURRENCY}): ${kb(total).trim()}`,
  );
  const top = (map: Map<string, number>, count: number) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, count)
      .forEach(([name, bytes]) => console.log(`${kb(bytes)}  ${name}`));
  console.log('\nby module:');
  top(byModule, 15);
  console.log('\nby function:');
  top(byFunction, 25);
  console.log(`\nprofile: ${saved}`);
} finally {
  gateway.kill('SIGKILL');
  sandbox.kill('SIGKILL');
}
