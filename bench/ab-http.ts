/**
 * Interleaved A/B of two builds over HTTP: one sandbox and two gateways (`OLD` and `NEW` dist
 * directories, page cache off) run as processes at once; blocks of requests go to one, then the
 * other, in alternating order, and each gateway's CPU time (/proc) is read around its blocks. The
 * machine's drift then falls on both alike, which separate runs of `npm run bench` cannot give.
 *
 *   npm run build && OLD=<dist of the other build> npx tsx bench/ab-http.ts [blocks=40] [scenario=list]
 *
 * OLD_FLAGS and NEW_FLAGS (space-separated) are Node flags for either gateway, e.g. one build
 * against itself with `NEW_FLAGS=--max-semi-space-size=32`.
 */
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import {
  cpuTimeMs,
  freePort,
  startService,
  stopService,
  waitForHttp,
  type Service,
} from './processes.js';
import { LIST_QUERY, WIDE_QUERY } from './scenarios.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OLD = process.env['OLD'];
const NEW = process.env['NEW'] ?? `${ROOT}dist`;
if (!OLD) throw new Error('OLD=<dist directory of the build to compare against> is required');
const BLOCKS = Number(process.argv[2] ?? 40);
const SCENARIO = process.argv[3] ?? 'list';
const BLOCK = 200;
const CONCURRENCY = 8;
const body = JSON.stringify({ query: SCENARIO === 'wide' ? WIDE_QUERY : LIST_QUERY });

async function gateway(name: string, dist: string, upstream: string): Promise<Service> {
  const port = await freePort();
  const flags = process.env[`${name.toUpperCase()}_FLAGS`];
  const service = startService({
    name,
    script: `${dist}/main.js`,
    nodeFlags: flags ? flags.split(' ') : [],
    env: {
      UPSTREAM_URL: upstream,
      CURSOR_SECRET: 'bench-cursor-secret',
      PORT: String(port),
      HOST: '127.0.0.1',
      CACHE_TTL_SECONDS: '0',
      LOG_LEVEL: 'info',
    },
    port,
    cwd: ROOT,
  });
  await waitForHttp(service, `${service.url}/healthz`, 30_000);
  return service;
}

async function load(url: string, count: number): Promise<void> {
  let sent = 0;
  const worker = async () => {
    while (sent < count) {
      sent++;
      const response = await request(`${url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'demo-key' },
        body,
      });
      const text = await response.body.text();
      if (response.statusCode !== 200 || text.includes('"errors"'))
        throw new Error(text.slice(0, 300));
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
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
  for (const side of Object.values(sides)) await load(side.url, 1_500);
  const cpu = { old: 0, new: 0, sandbox: 0 };
  const sandboxPid = sandbox.child.pid!;
  for (let i = 0; i < BLOCKS; i++) {
    for (const name of i % 2 ? (['new', 'old'] as const) : (['old', 'new'] as const)) {
      const pid = sides[name].child.pid!;
      const before = cpuTimeMs(pid);
      const sandboxBefore = cpuTimeMs(sandboxPid);
      await load(sides[name].url, BLOCK);
      cpu[name] += cpuTimeMs(pid) - before;
      cpu.sandbox += cpuTimeMs(sandboxPid) - sandboxBefore;
    }
  }
  const per = (ms: number) => ms / (BLOCKS * BLOCK);
  // The sandbox answered one upstream request per gateway request, for both sides: the issue's
  // ratio (gateway CPU ÷ the service's CPU for the same list) read in the same run.
  const sandboxPer = cpu.sandbox / (2 * BLOCKS * BLOCK);
  console.log(
    `${SCENARIO} over HTTP, ${BLOCKS} blocks of ${BLOCK} each, c=${CONCURRENCY}: old ${per(cpu.old).toFixed(3)} ms/req, ` +
      `new ${per(cpu.new).toFixed(3)} ms/req, ratio ${(cpu.new / cpu.old).toFixed(3)}; sandbox ` +
      `${sandboxPer.toFixed(3)} ms/req (old ÷ sandbox ${(per(cpu.old) / sandboxPer).toFixed(2)}, ` +
      `new ÷ sandbox ${(per(cpu.new) / sandboxPer).toFixed(2)})`,
  );
} finally {
  await Promise.all(services.map((service) => stopService(service)));
}
