/**
 * Interleaved A/B of two builds over HTTP: one sandbox and two gateways (`OLD` and `NEW` dist
 * directories, page cache off) run as processes at once; blocks of requests go to one, then the
 * other, in alternating order, and each gateway's CPU time (/proc) is read around its blocks. The
 * machine's drift then falls on both alike, which separate runs of `npm run bench` cannot give.
 *
 *   npm run build && OLD=<dist of the other build> npx tsx bench/ab-http.ts [blocks=40] [scenario=list]
 *
 * The scenario is list, wide or walk. Both gateways run with `npm start`'s Node flags
 * (scripts/start-flags.mjs); OLD_FLAGS and NEW_FLAGS (space-separated) add flags to either, e.g.
 * one build against itself with `NEW_FLAGS=--max-semi-space-size=32`.
 * `NEW_AUTH=jwt` runs the new side with `AUTH_MODE=jwt` and a `CREDIT_QUOTA` (in memory), a JWKS
 * served here and one bearer token: one build against itself then measures what token verification
 * and the quota cost per request; `NEW_REDIS_URL` puts the new side's quotas (and page cache) in
 * that Redis; `NEW_ENV="NAME=value ..."` gives the new side settings of its own, `ENV="..."` both
 * sides (e.g. `CACHE_TTL_SECONDS=60` with `NO_CACHE=1`, which sends `Cache-Control: no-cache`:
 * every request runs and its answer is kept, the miss of the default configuration);
 * `BLOCKS_SHOWN=1` prints each block's ratio in order. Each side's mean wall time per request and
 * RSS are printed too.
 */
import { fileURLToPath } from 'node:url';
import {
  cpuTimeMs,
  freePort,
  memory,
  startService,
  stopService,
  waitForHttp,
  type Service,
} from './processes.js';
import { interleaved, load, medianBlockRatio } from './interleaved.js';
import { startJwtSide } from './jwt-side.js';
import { QUERIES } from './scenarios.js';
import { startNodeFlags } from '../scripts/start-flags.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OLD = process.env['OLD'];
const NEW = process.env['NEW'] ?? `${ROOT}dist`;
if (!OLD) throw new Error('OLD=<dist directory of the build to compare against> is required');
const BLOCKS = Number(process.argv[2] ?? 40);
const SCENARIO = process.argv[3] ?? 'list';
const BLOCK = 200;
/** Settings given as `"NAME=value NAME=value"` in the environment variable `name`. */
const settingsIn = (name: string): Record<string, string> =>
  Object.fromEntries(
    (process.env[name] ?? '')
      .split(' ')
      .filter(Boolean)
      .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  );
/** `NEW_ENV`: settings of the new side only (e.g. a `CREDIT_QUOTA`); `ENV`: of both sides. */
const [ENV, NEW_ENV] = [settingsIn('ENV'), settingsIn('NEW_ENV')];
const NO_CACHE: Record<string, string> = process.env['NO_CACHE']
  ? { 'cache-control': 'no-cache' }
  : {};
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 8);
const query = QUERIES[SCENARIO as keyof typeof QUERIES];
if (!query) throw new RangeError(`scenario: one of ${Object.keys(QUERIES).join(', ')}`);
const body = JSON.stringify({ query });

const auth =
  process.env['NEW_AUTH'] === 'jwt'
    ? await startJwtSide('demo-key', process.env['NEW_REDIS_URL'])
    : null;
/** The credential each side's load sends. */
const credential: Record<'old' | 'new', Record<string, string>> = {
  old: { 'x-api-key': 'demo-key', ...NO_CACHE },
  new: { ...(auth ? auth.headers : { 'x-api-key': 'demo-key' }), ...NO_CACHE },
};

async function gateway(name: 'old' | 'new', dist: string, upstream: string): Promise<Service> {
  const port = await freePort();
  const flags = process.env[`${name.toUpperCase()}_FLAGS`];
  const service = startService({
    name,
    script: `${dist}/main.js`,
    nodeFlags: [...startNodeFlags(), ...(flags ? flags.split(' ') : [])],
    env: {
      UPSTREAM_URL: upstream,
      CURSOR_SECRET: 'bench-cursor-secret',
      PORT: String(port),
      HOST: '127.0.0.1',
      CACHE_TTL_SECONDS: '0',
      LOG_LEVEL: 'info',
      ...ENV,
      ...(name === 'new' ? { ...auth?.env, ...NEW_ENV } : {}),
    },
    port,
    cwd: ROOT,
  });
  await waitForHttp(service, `${service.url}/healthz`, 30_000);
  return service;
}

const services: Service[] = [];
try {
  const sandboxPort = await freePort();
  const sandbox = startService({
    name: 'sandbox',
    script: `${NEW}/sandbox/main.js`,
    args: ['--port', String(sandboxPort), '--host', '127.0.0.1', '--quiet'],
    port: sandboxPort,
    cwd: ROOT,
  });
  services.push(sandbox);
  await waitForHttp(sandbox, `${sandbox.url}/v1/companies?limit=1`, 30_000).catch(() => {});
  const sides = {
    old: await gateway('old', OLD, sandbox.url),
    new: await gateway('new', NEW, sandbox.url),
  };
  services.push(sides.old, sides.new);
  for (const name of ['old', 'new'] as const) {
    await load(sides[name].url, body, credential[name], 1_500, CONCURRENCY);
  }
  const sandboxPid = sandbox.child.pid!;
  let sandboxCpu = 0;
  const result = await interleaved(
    {
      old: { url: sides.old.url, pid: sides.old.child.pid!, headers: credential.old },
      new: { url: sides.new.url, pid: sides.new.child.pid!, headers: credential.new },
    },
    body,
    { blocks: BLOCKS, block: BLOCK, concurrency: CONCURRENCY },
    async (run) => {
      const before = cpuTimeMs(sandboxPid);
      await run();
      sandboxCpu += cpuTimeMs(sandboxPid) - before;
    },
  );
  // The sandbox answered one upstream request per gateway request, for both sides: the issue's
  // ratio (gateway CPU ÷ the service's CPU for the same list) read in the same run.
  const sandboxPer = sandboxCpu / (2 * BLOCKS * BLOCK);
  const { old, new: next } = result;
  console.log(
    `${SCENARIO} over HTTP, ${BLOCKS} blocks of ${BLOCK} each, c=${CONCURRENCY}: old ${old.cpuMs.toFixed(3)} ms/req, ` +
      `new ${next.cpuMs.toFixed(3)} ms/req, ratio ${(next.cpuMs / old.cpuMs).toFixed(3)}; sandbox ` +
      `${sandboxPer.toFixed(3)} ms/req (old ÷ sandbox ${(old.cpuMs / sandboxPer).toFixed(2)}, ` +
      `new ÷ sandbox ${(next.cpuMs / sandboxPer).toFixed(2)})`,
  );
  console.log(
    `ratio over the whole run ${(next.spanCpuMs / old.spanCpuMs).toFixed(3)} ` +
      `(old ${old.spanCpuMs.toFixed(3)}, new ${next.spanCpuMs.toFixed(3)} ms/req); ` +
      `median of the block ratios ${medianBlockRatio(old, next).toFixed(3)}`,
  );
  console.log(
    `mean latency: old ${old.latencyMs.toFixed(3)} ms, new ${next.latencyMs.toFixed(3)} ms`,
  );
  if (process.env['BLOCKS_SHOWN']) {
    const ratios = next.blockCpuMs.map((cpu, i) => (cpu / old.blockCpuMs[i]!).toFixed(2));
    console.log(`block ratios in order: ${ratios.join(' ')}`);
  }
  const rss = (name: 'old' | 'new') => {
    const { rssMb, peakRssMb } = memory(sides[name].child.pid!);
    return `${rssMb.toFixed(0)} MB (peak ${peakRssMb.toFixed(0)})`;
  };
  console.log(`RSS after the run: old ${rss('old')}, new ${rss('new')}`);
} finally {
  auth?.close();
  await Promise.all(services.map((service) => stopService(service)));
}
