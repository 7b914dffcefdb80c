/**
 * What V8's collector does in each of K fresh gateway processes under the walk at c=32: per block
 * of 1,000 walks, CPU per walk, the young collections (count, ms) and full ones, and the heap's
 * new and old space after the block (from `/metrics`). Used for issue 39's slow state: a process
 * whose young collections each took twice as long and whose old space grew five times as fast,
 * from its first block on, for its whole life (`FLAGS=--allocation-site-pretenuring` brings it
 * back, as it was before `npm start` turned V8's pretenuring off).
 *
 *   npm run build && [K=5] [FLAGS='--a --b'] npx tsx bench/experiments/gc-states.ts
 */
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { startNodeFlags } from '../../scripts/start-flags.mjs';
import { load } from '../interleaved.js';
import {
  cpuTimeMs,
  freePort,
  memory,
  servingPid,
  startSandbox,
  startService,
  stopService,
  waitForHttp,
} from '../processes.js';
import { QUERIES } from '../scenarios.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const K = Number(process.env.K ?? 5);
const BLOCKS = 6;
const BLOCK = 1_000;
const FLAGS = (process.env.FLAGS ?? '').split(' ').filter(Boolean);
const body = JSON.stringify({ query: QUERIES.walk });
const headers = { 'x-api-key': 'demo-key' };
const MB = 2 ** 20;

/** The heap's new and old space, total and used, from the gateway's Prometheus text. */
async function spaces(url: string): Promise<string> {
  const text = await (await request(`${url}/metrics`)).body.text();
  const read = (metric: string, space: string) =>
    Number(new RegExp(`^${metric}\\{space="${space}"\\} (\\d+)`, 'm').exec(text)?.[1]) / MB;
  return (
    `new ${read('nodejs_heap_space_size_used_bytes', 'new').toFixed(0)}/` +
    `${read('nodejs_heap_space_size_total_bytes', 'new').toFixed(0)} MB, ` +
    `old ${read('nodejs_heap_space_size_total_bytes', 'old').toFixed(0)} MB`
  );
}

const sandbox = await startSandbox();
try {
  for (let k = 0; k < K; k++) {
    const port = await freePort();
    const gateway = startService({
      name: 'gateway',
      script: 'dist/main.js',
      env: {
        UPSTREAM_URL: sandbox.url,
        PORT: String(port),
        HOST: '127.0.0.1',
        CACHE_TTL_SECONDS: '0',
        CURSOR_SECRET: 'bench-cursor-secret',
        METRICS: 'public',
        // Its stdout is --trace-gc's lines alone.
        LOG_LEVEL: 'warn',
      },
      nodeFlags: [...startNodeFlags(), ...FLAGS, '--trace-gc'],
      port,
      cwd: ROOT,
    });
    const gc = { young: 0, youngMs: 0, full: 0, fullMs: 0 };
    let pending = '';
    gateway.child.stdout!.on('data', (chunk: Buffer) => {
      const lines = (pending + chunk.toString('utf8')).split('\n');
      pending = lines.pop()!;
      for (const line of lines) {
        // `… ms: Scavenge 40.1 (65.2) -> 12.3 (66.0) MB, 3.8 / 0.0 ms …`
        const event = /: (Scavenge|Mark-Compact|Mark-Sweep)\S* .*? MB, ([\d.]+)/.exec(line);
        if (!event) continue;
        const ms = Number(event[2]);
        if (event[1] === 'Scavenge') {
          gc.young += 1;
          gc.youngMs += ms;
        } else {
          gc.full += 1;
          gc.fullMs += ms;
        }
      }
    });
    try {
      await waitForHttp(gateway, `${gateway.url}/health`, 30_000);
      const pid = servingPid(gateway);
      const blocks: string[] = [];
      for (let block = 0; block < BLOCKS; block++) {
        Object.assign(gc, { young: 0, youngMs: 0, full: 0, fullMs: 0 });
        const before = cpuTimeMs(pid);
        await load(gateway.url, body, headers, BLOCK, 32);
        const cpu = (cpuTimeMs(pid) - before) / BLOCK;
        blocks.push(
          `${cpu.toFixed(2)} ms (young ${gc.young}× ${gc.youngMs.toFixed(0)} ms, ` +
            `full ${gc.full}× ${gc.fullMs.toFixed(0)} ms, ${await spaces(gateway.url)})`,
        );
      }
      console.log(`process ${k + 1}, peak RSS ${memory(pid).peakRssMb.toFixed(0)} MB:`);
      for (const line of blocks) console.log(`  ${line}`);
    } finally {
      await stopService(gateway);
    }
  }
} finally {
  await stopService(sandbox);
}
