/**
 * CPU per request of one or more servers, each started afresh K times in turn before one sandbox:
 * after a warm-up, blocks of requests at one concurrency, CPU from /proc around each block, and
 * the process's RSS (now and peak) after the last. A server is a dist directory (its main.js, page
 * cache off, with `npm start`'s Node flags) or a `.mjs` floor, with settings and flags of its own
 * after colons: `dist:NEW_FLAG=1`, `dist:NODE_FLAGS=--max-semi-space-size=32`, several flags
 * joined by `+`. Used for issue 39, where one process of a build can run at c=32 in a state
 * 10–20% slower than another process of the same build for its whole life: an A/B of one process
 * per side (bench/ab-http.ts) then measures the processes, not the builds.
 *
 *   npm run build && [CONCURRENCY=32] npx tsx bench/experiments/fresh-processes.ts [K=4] \
 *     [servers=dist,bench/yoga-floor-server.mjs] [scenario=walk]
 */
import { fileURLToPath } from 'node:url';
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
const K = Number(process.argv[2] ?? 4);
const SERVERS = (process.argv[3] ?? 'dist,bench/yoga-floor-server.mjs').split(',');
const SCENARIO = (process.argv[4] ?? 'walk') as keyof typeof QUERIES;
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 32);
const WARM_UP = 2000;
const BLOCKS = 4;
const BLOCK = 1000;
if (!QUERIES[SCENARIO]) throw new RangeError(`scenario: one of ${Object.keys(QUERIES).join(', ')}`);

/** `path[:NAME=value]…` → the script, its settings, its Node flags. */
function parse(server: string) {
  const [path, ...pairs] = server.split(':') as [string, ...string[]];
  const env: Record<string, string> = Object.fromEntries(
    pairs.map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  );
  const floor = path.endsWith('.mjs');
  const own = env['NODE_FLAGS']?.split('+') ?? [];
  delete env['NODE_FLAGS'];
  return {
    script: floor ? path : `${path}/main.js`,
    env: floor ? env : { CACHE_TTL_SECONDS: '0', CURSOR_SECRET: 'bench-cursor-secret', ...env },
    nodeFlags: floor ? own : [...startNodeFlags(), ...own],
  };
}

const body = JSON.stringify({ query: QUERIES[SCENARIO] });
const headers = { 'x-api-key': 'demo-key' };
const perServer = new Map<string, number[]>(SERVERS.map((server) => [server, []]));
const sandbox = await startSandbox();
try {
  for (let round = 0; round < K; round++) {
    for (const server of SERVERS) {
      const { script, env, nodeFlags } = parse(server);
      const port = await freePort();
      const service = startService({
        name: server,
        script,
        env: { UPSTREAM_URL: sandbox.url, PORT: String(port), HOST: '127.0.0.1', ...env },
        nodeFlags,
        port,
        cwd: ROOT,
      });
      try {
        await waitForHttp(service, `${service.url}/graphql?query=%7B__typename%7D`, 30_000);
        const pid = servingPid(service);
        await load(service.url, body, headers, WARM_UP, CONCURRENCY);
        const blocks: number[] = [];
        for (let block = 0; block < BLOCKS; block++) {
          const before = cpuTimeMs(pid);
          await load(service.url, body, headers, BLOCK, CONCURRENCY);
          blocks.push((cpuTimeMs(pid) - before) / BLOCK);
        }
        const { rssMb, peakRssMb } = memory(pid);
        perServer.get(server)!.push(...blocks);
        console.log(
          `${server} #${round + 1}: ${blocks.map((ms) => ms.toFixed(3)).join(' ')} ms/req, ` +
            `RSS ${rssMb.toFixed(0)} MB (peak ${peakRssMb.toFixed(0)})`,
        );
      } finally {
        await stopService(service);
      }
    }
  }
} finally {
  await stopService(sandbox);
}
for (const [server, blocks] of perServer) {
  const sorted = [...blocks].sort((a, b) => a - b);
  const mean = blocks.reduce((sum, ms) => sum + ms, 0) / blocks.length;
  console.log(
    `${server}, ${SCENARIO} at c=${CONCURRENCY}, ${K} processes × ${BLOCKS} blocks of ${BLOCK}: ` +
      `median ${sorted[sorted.length >> 1]!.toFixed(3)} ms/req, mean ${mean.toFixed(3)}`,
  );
}
