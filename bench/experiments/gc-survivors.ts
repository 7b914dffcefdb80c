/**
 * What the young generation's collections cost the gateway per request, and why, beside the Yoga
 * floor: the Yoga floor (bench/yoga-floor-server.mjs) and the gateway (this build's dist/main.js,
 * page cache off; another build's with `dist`) each loaded alone with one scenario, V8's
 * `GCProfiler` on (gc-profiler-preload.mjs) over the measured requests after a warm-up. Per
 * request, by kind of collection: pause, bytes allocated in the young generation, bytes that
 * survived a scavenge, bytes promoted to the old generation. A scavenge's cost is what survives
 * it; what is allocated sets how often one runs. Used for issue 39's walk.
 *
 * The gateway runs with `npm start`'s Node flags (scripts/start-flags.mjs); `FLOOR_FLAGS` gives
 * the Yoga floor flags of its own, e.g. the same ones.
 *
 *   npm run build && [CONCURRENCY=8] [FLOOR_FLAGS=…] npx tsx bench/experiments/gc-survivors.ts [list|wide|walk] [requests=2000] [dist=dist]
 */
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { load } from '../interleaved.js';
import {
  freePort,
  servingPid,
  startSandbox,
  startService,
  stopService,
  waitForHttp,
  type Service,
} from '../processes.js';
import { QUERIES } from '../scenarios.js';
import { startNodeFlags } from '../../scripts/start-flags.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SCENARIO = (process.argv[2] ?? 'walk') as keyof typeof QUERIES;
const REQUESTS = Number(process.argv[3] ?? 2000);
const DIST = process.argv[4] ?? 'dist';
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 8);
const WARM_UP = 1500;
/** The Yoga floor's Node flags (`FLOOR_FLAGS`, space-separated); the gateway runs with `npm start`'s. */
const FLOOR_FLAGS = (process.env.FLOOR_FLAGS ?? '').split(' ').filter(Boolean);
if (!QUERIES[SCENARIO]) throw new RangeError(`scenario: one of ${Object.keys(QUERIES).join(', ')}`);

/** What `GCProfiler.stop()` returns, the parts read here. */
interface Space {
  spaceName: string;
  spaceUsedSize: number;
}
interface Collection {
  gcType: string;
  cost: number;
  beforeGC: { heapSpaceStatistics: Space[] };
  afterGC: { heapSpaceStatistics: Space[] };
}

const used = (spaces: Space[], name: string) =>
  spaces.find((space) => space.spaceName === name)?.spaceUsedSize ?? 0;

/** Per request, by kind of collection. */
function summarize(collections: Collection[], requests: number): string[] {
  const kinds = new Map<
    string,
    { count: number; us: number; young: number; survived: number; promoted: number }
  >();
  for (const { gcType, cost, beforeGC, afterGC } of collections) {
    const kind = kinds.get(gcType) ?? { count: 0, us: 0, young: 0, survived: 0, promoted: 0 };
    kind.count++;
    kind.us += cost;
    kind.young += used(beforeGC.heapSpaceStatistics, 'new_space');
    kind.survived += used(afterGC.heapSpaceStatistics, 'new_space');
    kind.promoted +=
      used(afterGC.heapSpaceStatistics, 'old_space') -
      used(beforeGC.heapSpaceStatistics, 'old_space');
    kinds.set(gcType, kind);
  }
  const kb = (bytes: number) => `${(bytes / requests / 1024).toFixed(1)} KB`;
  return [...kinds].map(
    ([gcType, kind]) =>
      `  ${gcType}: ${kind.count} collections, pauses ${(kind.us / 1000 / requests).toFixed(3)} ms/request, ` +
      `young generation before ${kb(kind.young)}, survived ${kb(kind.survived)}, old generation ${kind.promoted >= 0 ? '+' : ''}${kb(kind.promoted)} per request`,
  );
}

const TMP = join(ROOT, '.bench-tmp');
mkdirSync(TMP, { recursive: true });

const services: Service[] = [];
try {
  const sandbox = await startSandbox();
  services.push(sandbox);
  const body = JSON.stringify({ query: QUERIES[SCENARIO] });
  const headers = { 'x-api-key': 'demo-key' };
  const sides: { name: string; script: string; env: Record<string, string>; flags: string[] }[] = [
    { name: 'Yoga floor', script: 'bench/yoga-floor-server.mjs', env: {}, flags: FLOOR_FLAGS },
    {
      name: 'gateway',
      script: `${DIST}/main.js`,
      flags: startNodeFlags(),
      env: { CACHE_TTL_SECONDS: '0', CURSOR_SECRET: 'bench-cursor-secret' },
    },
  ];
  for (const side of sides) {
    const port = await freePort();
    const out = join(TMP, `gc-survivors-${port}.json`);
    const service = startService({
      name: side.name,
      script: side.script,
      env: {
        UPSTREAM_URL: sandbox.url,
        PORT: String(port),
        HOST: '127.0.0.1',
        GC_PROFILE_OUT: out,
        ...side.env,
      },
      port,
      cwd: ROOT,
      nodeFlags: [...side.flags, '--import', `${ROOT}bench/experiments/gc-profiler-preload.mjs`],
    });
    services.push(service);
    await waitForHttp(service, `${service.url}/graphql?query=%7B__typename%7D`, 30_000);
    await load(service.url, body, headers, WARM_UP, CONCURRENCY);
    process.kill(servingPid(service), 'SIGUSR2');
    await sleep(200);
    await load(service.url, body, headers, REQUESTS, CONCURRENCY);
    await stopService(service, 10_000);
    const { statistics } = JSON.parse(readFileSync(out, 'utf8')) as { statistics: Collection[] };
    rmSync(out);
    console.log(`${side.name}, ${SCENARIO} × ${REQUESTS} at c=${CONCURRENCY}:`);
    for (const line of summarize(statistics, REQUESTS)) console.log(line);
  }
} finally {
  await Promise.all(services.map((service) => stopService(service)));
}
