/**
 * Issue 39's measure, interleaved: the gateway (this build's dist/, page cache off) against the
 * Yoga floor (bench/yoga-floor-server.mjs), both at once before one sandbox, blocks of requests to
 * one then the other in alternating order, CPU from /proc around each block. A full
 * `npm run bench` measures them one after the other, 8 s each, and on a machine whose speed
 * drifts (this one's moved by a fifth between two runs of the same build) a ratio of runs apart
 * moves with it; here the drift falls on both alike.
 *
 * The gateway runs with `npm start`'s Node flags (scripts/start-flags.mjs); `FLOOR_FLAGS` gives
 * the Yoga floor flags of its own, e.g. the same ones, for the floor tuned alike.
 *
 *   npm run build && [CONCURRENCY=8] [FLOOR_FLAGS=…] npx tsx bench/experiments/gateway-vs-yoga-floor.ts [blocks=20] [list,wide,walk]
 */
import { fileURLToPath } from 'node:url';
import {
  freePort,
  servingPid,
  startSandbox,
  startService,
  stopService,
  waitForHttp,
  type Service,
} from '../processes.js';
import { interleaved, load, medianBlockRatio } from '../interleaved.js';
import { QUERIES } from '../scenarios.js';
import { startNodeFlags } from '../../scripts/start-flags.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BLOCKS = Number(process.argv[2] ?? 20);
const SCENARIOS = (process.argv[3] ?? 'list,wide,walk').split(',') as (keyof typeof QUERIES)[];
/** Requests in flight on each side (`CONCURRENCY`); the full bench's two are 1 and 32. */
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 8);
/** The Yoga floor's Node flags (`FLOOR_FLAGS`, space-separated); the gateway runs with `npm start`'s. */
const FLOOR_FLAGS = (process.env.FLOOR_FLAGS ?? '').split(' ').filter(Boolean);
for (const scenario of SCENARIOS) {
  if (!QUERIES[scenario])
    throw new RangeError(`scenario: one of ${Object.keys(QUERIES).join(', ')}`);
}

const services: Service[] = [];
try {
  const sandbox = await startSandbox();
  services.push(sandbox);
  const start = async (
    name: string,
    script: string,
    env: Record<string, string>,
    nodeFlags: string[],
  ) => {
    const port = await freePort();
    const service = startService({
      name,
      script,
      env: { UPSTREAM_URL: sandbox.url, PORT: String(port), HOST: '127.0.0.1', ...env },
      nodeFlags,
      port,
      cwd: ROOT,
    });
    services.push(service);
    await waitForHttp(service, `${service.url}/graphql?query=%7B__typename%7D`, 30_000);
    return service;
  };
  const floor = await start('Yoga floor', 'bench/yoga-floor-server.mjs', {}, FLOOR_FLAGS);
  const gateway = await start(
    'gateway',
    'dist/main.js',
    {
      CACHE_TTL_SECONDS: '0',
      CURSOR_SECRET: 'bench-cursor-secret',
    },
    startNodeFlags(),
  );
  const headers = { 'x-api-key': 'demo-key' };
  const sides = {
    floor: { url: floor.url, pid: servingPid(floor), headers },
    gateway: { url: gateway.url, pid: servingPid(gateway), headers },
  };
  for (const scenario of SCENARIOS) {
    const body = JSON.stringify({ query: QUERIES[scenario] });
    for (const side of Object.values(sides)) await load(side.url, body, headers, 600, CONCURRENCY);
    const result = await interleaved(sides, body, {
      blocks: BLOCKS,
      block: 200,
      concurrency: CONCURRENCY,
    });
    const { floor: a, gateway: b } = result;
    console.log(
      `${scenario}, ${BLOCKS} blocks of 200 each, c=${CONCURRENCY}: Yoga floor ${a.cpuMs.toFixed(3)} ms/req, ` +
        `gateway ${b.cpuMs.toFixed(3)} ms/req, gateway ÷ Yoga floor ${(b.cpuMs / a.cpuMs).toFixed(3)}, ` +
        `median of the block ratios ${medianBlockRatio(a, b).toFixed(3)}, ` +
        `whole run ${(b.spanCpuMs / a.spanCpuMs).toFixed(3)}`,
    );
  }
} finally {
  await Promise.all(services.map((service) => stopService(service)));
}
