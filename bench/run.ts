import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { runLoad } from './load.js';
import {
  measure,
  loadTarget,
  type RunRecord,
  type Side,
  type Stack,
  type Timing,
} from './measure.js';
import {
  clockTicksPerSecond,
  cpuTimeMs,
  freePort,
  memory,
  processTree,
  servingPid,
  startSandbox,
  startService,
  stopService,
  waitForHttp,
  type Service,
} from './processes.js';
import { formatProfile, mainThreadProfile, summarizeProfile } from './profile.js';
import { interleaved, load, medianBlockRatio } from './interleaved.js';
import { startJwtSide } from './jwt-side.js';
import { subscriptionFanOut } from './subscribers.js';
import { machineLine, renderReport, writeReport, type RunInfo } from './report.js';
import { LIST_QUERY, SCENARIOS, type Scenario, type ScenarioId } from './scenarios.js';
import { UpstreamControls } from './upstream-controls.js';
import { startNodeFlags } from '../scripts/start-flags.mjs';

const HELP = `npm run bench -- [options]

Starts the sandbox and the gateway as separate processes on loopback and measures each scenario
direct-to-REST and through the gateway, at concurrency 1 and at saturation; then 1,000 SSE
subscribers (200 with --quick) over 10 filters on a gateway polling every second. Prints the
tables and writes BENCHMARKS.md (keeping its notes section).

  --quick              2 s per run (under three minutes in all); the default is 8 s per run
  --profile            profile the gateway (--cpu-prof) under the list scenario (or the one
                       scenario --only names) and print the top 25 functions by self time;
                       writes no report
  --profile-yoga-floor with --profile: profile the Yoga floor instead, under the same load
  --only <ids>         comma-separated scenarios (${SCENARIOS.map((s) => s.id).join(', ')}); writes no report
  --connections <n>    saturating concurrency (default 32)
  --before <dist>      also run list and wide through an earlier build (its dist/ directory, e.g.
                       from \`git worktree add\` and \`npm run build\` there): before and after in one table
  --no-write           print only, leave BENCHMARKS.md alone
  --help               show this help
`;

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TMP = join(ROOT, '.bench-tmp');
const API_KEY = 'demo-key';
const START_TIMEOUT_MS = 30_000;

interface Options {
  quick: boolean;
  profile: boolean;
  /** With `profile`: the Yoga floor is profiled instead of the gateway. */
  profileYogaFloor: boolean;
  only: Set<ScenarioId> | null;
  connections: number;
  write: boolean;
  /** The dist/ directory of an earlier build to measure next to this one. */
  before: string | null;
}

function parseOptions(argv: string[]): Options | null {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      quick: { type: 'boolean' },
      profile: { type: 'boolean' },
      'profile-yoga-floor': { type: 'boolean' },
      only: { type: 'string' },
      connections: { type: 'string' },
      before: { type: 'string' },
      'no-write': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return null;
  let only: Set<ScenarioId> | null = null;
  if (values.only !== undefined) {
    const known = new Set<string>(SCENARIOS.map((s) => s.id));
    const ids = values.only.split(',').map((id) => id.trim());
    const unknown = ids.filter((id) => !known.has(id));
    if (unknown.length > 0) throw new RangeError(`--only: unknown scenario ${unknown.join(', ')}`);
    only = new Set(ids as ScenarioId[]);
  }
  const connections = Number(values.connections ?? 32);
  if (!Number.isInteger(connections) || connections < 2 || connections > 1024) {
    throw new RangeError(`--connections must be an integer from 2 to 1024`);
  }
  return {
    quick: values.quick ?? false,
    profile: values.profile ?? false,
    profileYogaFloor: values['profile-yoga-floor'] ?? false,
    only,
    connections,
    write: !values['no-write'] && only === null && !values.profile,
    before: values.before ?? null,
  };
}

function timingFor(quick: boolean): Timing {
  return quick
    ? {
        durationS: 2,
        warmupRequests: 200,
        warmupMaxMs: 400,
        firstWarmupRequests: 10_000,
        firstWarmupMaxMs: 3_000,
      }
    : {
        durationS: 8,
        warmupRequests: 200,
        warmupMaxMs: 2_000,
        firstWarmupRequests: 10_000,
        firstWarmupMaxMs: 5_000,
      };
}

/**
 * The gateway under test. `cached`: with the page cache on (an hour, so that nothing expires
 * during a run); otherwise off, so that every request reaches the upstream.
 */
async function startGateway(
  upstreamUrl: string,
  {
    cached = false,
    workers = 1,
    nodeFlags = [],
    dist = 'dist',
    env = {},
    name,
  }: {
    cached?: boolean;
    workers?: number;
    nodeFlags?: string[];
    dist?: string;
    env?: Record<string, string>;
    name?: string;
  } = {},
): Promise<Service> {
  const port = await freePort();
  const gateway = startService({
    name:
      name ??
      (dist !== 'dist'
        ? `gateway (${dist})`
        : cached
          ? 'gateway (cache on)'
          : workers > 1
            ? `gateway (WORKERS=${workers})`
            : 'gateway'),
    script: join(dist, 'main.js'),
    env: {
      UPSTREAM_URL: upstreamUrl,
      // Production with an upstream refuses the built-in secret.
      CURSOR_SECRET: 'bench-cursor-secret',
      PORT: String(port),
      HOST: '127.0.0.1',
      CACHE_TTL_SECONDS: cached ? '3600' : '0',
      WORKERS: String(workers),
      ...env,
    },
    // As `npm start` runs it, and then the flags of this run (a profile's).
    nodeFlags: [...startNodeFlags(), ...nodeFlags],
    port,
    cwd: ROOT,
  });
  await waitForHttp(gateway, `${gateway.url}/health`, START_TIMEOUT_MS);
  return gateway;
}

/**
 * A floor: bench/floor-server.mjs (the least a Node server between the load and the sandbox does)
 * or bench/yoga-floor-server.mjs (the same under a bare Yoga).
 */
async function startFloor(
  upstreamUrl: string,
  side: 'floor' | 'yoga-floor',
  nodeFlags: string[] = [],
): Promise<Service> {
  const port = await freePort();
  const floor = startService({
    name: side,
    script: `bench/${side}-server.mjs`,
    env: { UPSTREAM_URL: upstreamUrl, PORT: String(port), HOST: '127.0.0.1' },
    nodeFlags,
    port,
    cwd: ROOT,
  });
  await waitForHttp(floor, `${floor.url}/health`, START_TIMEOUT_MS);
  return floor;
}

function stackOf(sandbox: Service, gateway: Service, { cluster = false } = {}): Stack {
  return {
    sandboxUrl: sandbox.url,
    gatewayUrl: gateway.url,
    sandboxPid: servingPid(sandbox),
    gatewayPid: servingPid(gateway),
    // The primary and its workers (read at each run: a worker may have been replaced).
    ...(cluster ? { gatewayPids: () => processTree(gateway.child.pid!) } : {}),
    apiKey: API_KEY,
    controls: new UpstreamControls(sandbox.url),
  };
}

function summaryLine(run: RunRecord): string {
  const l = run.load;
  return (
    `${run.scenario.id.padEnd(13)} ${run.side.padEnd(10)} c=${String(l.connections).padEnd(3)} ` +
    `${l.requestsPerSecond.toFixed(0).padStart(6)} req/s  p50 ${l.p50Ms.toFixed(2)} ms  ` +
    `p99 ${l.p99Ms.toFixed(2)} ms  CPU ${run.cpuMsPerRequest.toFixed(3)} ms/req` +
    (run.problems.length > 0 ? `  (${run.problems.length} problem(s))` : '')
  );
}

/**
 * The (scenario, side, concurrency) runs of a full benchmark, in order: every scenario at c=1,
 * then at saturation. A run at saturation leaves a process's heap at its peak, and the major
 * collection of that garbage falls in the process's next run: measured after one, a c=1 run of
 * 2 s (--quick) carried it (wide at c=1 read 2.18 ms a request after list at c=32, 1.35 in fresh
 * processes). At saturation it is spread over ten times the requests.
 */
function plan(options: Options): [Scenario, Side, number][] {
  const runs: [Scenario, Side, number][] = [];
  for (const connections of [1, options.connections]) {
    for (const scenario of SCENARIOS) {
      if (options.only && !options.only.has(scenario.id)) continue;
      const levels = scenario.workers
        ? [options.connections]
        : scenario.saturate
          ? [1, options.connections]
          : [1];
      if (!levels.includes(connections)) continue;
      if (scenario.restPath) runs.push([scenario, 'direct', connections]);
      for (const floor of scenario.floors ?? []) runs.push([scenario, floor, connections]);
      if (scenario.compared && options.before) runs.push([scenario, 'before', connections]);
      runs.push([scenario, 'gateway', connections]);
    }
  }
  return runs;
}

/** Runs in the report's order: by scenario, then concurrency (the order they ran in otherwise). */
function byScenario(runs: RunRecord[]): RunRecord[] {
  const rank = (run: RunRecord) => SCENARIOS.indexOf(run.scenario);
  return [...runs].sort((a, b) => rank(a) - rank(b) || a.load.connections - b.load.connections);
}

/**
 * Issue 24's measure: a gateway with `AUTH_MODE=jwt` and a quota (a JWKS served here) and the
 * api-key gateway, loaded in alternating blocks of the list, CPU read around each block.
 */
async function authenticationAb(
  upstreamUrl: string,
  quick: boolean,
  services: Service[],
): Promise<NonNullable<RunInfo['authAb']>> {
  const jwt = await startJwtSide(API_KEY);
  try {
    // Two gateways started together, so that neither is warmer than the other.
    const apiKeyGateway = await startGateway(upstreamUrl, { name: 'gateway (api-key)' });
    const jwtGateway = await startGateway(upstreamUrl, { env: jwt.env, name: 'gateway (jwt)' });
    services.push(apiKeyGateway, jwtGateway);
    const shape = { blocks: quick ? 10 : 30, block: 200, concurrency: 8 };
    const body = JSON.stringify({ query: LIST_QUERY });
    const apiKey = {
      url: apiKeyGateway.url,
      pid: servingPid(apiKeyGateway),
      headers: { 'x-api-key': API_KEY },
    };
    const side = { url: jwtGateway.url, pid: servingPid(jwtGateway), headers: jwt.headers };
    // Both warmed alike: the same 1,500 requests as bench/ab-http.ts.
    await load(apiKey.url, body, apiKey.headers, 1_500, shape.concurrency);
    await load(side.url, body, side.headers, 1_500, shape.concurrency);
    const result = await interleaved({ apiKey, jwt: side }, body, shape);
    console.log(
      `auth A/B, list, ${shape.blocks} blocks of ${shape.block}: api-key ${result.apiKey.cpuMs.toFixed(3)} ms/req, ` +
        `jwt + quota ${result.jwt.cpuMs.toFixed(3)} ms/req, ratio ${(result.jwt.cpuMs / result.apiKey.cpuMs).toFixed(3)}, ` +
        `median of the block ratios ${medianBlockRatio(result.apiKey, result.jwt).toFixed(3)}`,
    );
    return { ...result, ...shape };
  } finally {
    jwt.close();
  }
}

/**
 * Issue 24's measure again, in one process (`bench/auth-in-process.ts`): both gateways'
 * fetch handlers in turns of 50 requests, CPU from `process.cpuUsage()`, which resolves what
 * /proc's 10 ms ticks cannot; first an A/A (both `api-key`), the instrument's own spread.
 */
async function authenticationInProcess(
  quick: boolean,
): Promise<NonNullable<RunInfo['authInProcess']>> {
  const requests = quick ? 6_000 : 20_000;
  const side = async (aa: boolean) => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', join(ROOT, 'bench/auth-in-process.ts'), String(requests)],
      { cwd: ROOT, env: { ...process.env, ...(aa ? { AA: '1' } : {}) }, timeout: 600_000 },
    );
    const lines = stdout.trim().split('\n');
    console.log(`auth in process${aa ? ' (A/A)' : ''}: ${lines.at(-2)}`);
    return JSON.parse(lines.at(-1)!) as { apiKeyMs: number; jwtMs: number; median: number };
  };
  const aa = await side(true);
  const ab = await side(false);
  return { requests, aa, ab };
}

/**
 * The subscription fan-out on a gateway of its own: 1,000 SSE subscribers (200 with --quick)
 * over 10 round filters. POLL_INTERVAL_SECONDS=1 (default 30), so that the run waits seconds,
 * not minutes, for the polls; the fan-out's subscribers are one key's, so its bounds are raised to
 * let them all in (MAX_SUBSCRIPTIONS_PER_PRINCIPAL, default 100) and its 10 pollers poll every
 * second (POLL_REQUESTS_PER_SECOND, default 1): it measures the fan-out, not the bounds.
 */
async function subscriptions(
  sandboxUrl: string,
  quick: boolean,
  services: Service[],
): Promise<NonNullable<RunInfo['subscriptions']>> {
  const metricsPort = await freePort();
  const gateway = await startGateway(sandboxUrl, {
    env: {
      POLL_INTERVAL_SECONDS: '1',
      METRICS_PORT: String(metricsPort),
      MAX_SUBSCRIPTIONS_PER_PRINCIPAL: '1000',
      POLL_REQUESTS_PER_SECOND: '10',
    },
    name: 'gateway (subscriptions)',
  });
  services.push(gateway);
  try {
    return await subscriptionFanOut({
      sandboxUrl,
      gatewayUrl: gateway.url,
      metricsUrl: `http://127.0.0.1:${metricsPort}`,
      gatewayPid: servingPid(gateway),
      apiKey: API_KEY,
      subscribers: quick ? 200 : 1_000,
    });
  } finally {
    await stopService(gateway, 10_000);
  }
}

async function benchmark(options: Options, services: Service[]): Promise<number> {
  const timing = timingFor(options.quick);
  const started = Date.now();
  const loadAverage = loadavg()[0] ?? NaN;
  const sandbox = await startSandbox(START_TIMEOUT_MS);
  services.push(sandbox);
  const gateway = await startGateway(sandbox.url);
  services.push(gateway);
  const stack = stackOf(sandbox, gateway);
  const runsPlanned = plan(options);
  stack.others = {};
  for (const side of ['floor', 'yoga-floor'] as const) {
    if (!runsPlanned.some(([, planned]) => planned === side)) continue;
    const floor = await startFloor(sandbox.url, side);
    services.push(floor);
    stack.others[side] = { url: floor.url, pid: servingPid(floor) };
  }
  if (options.before && runsPlanned.some(([, side]) => side === 'before')) {
    const before = await startGateway(sandbox.url, { dist: options.before });
    services.push(before);
    stack.others.before = { url: before.url, pid: servingPid(before) };
  }
  let cachedStack: Stack | null = null;
  if (runsPlanned.some(([scenario]) => scenario.cached)) {
    const cachedGateway = await startGateway(sandbox.url, { cached: true });
    services.push(cachedGateway);
    cachedStack = stackOf(sandbox, cachedGateway);
  }
  let workersStack: Stack | null = null;
  const workers = runsPlanned.find(([scenario]) => scenario.workers)?.[0].workers;
  if (workers) {
    const clusterGateway = await startGateway(sandbox.url, { workers });
    services.push(clusterGateway);
    workersStack = stackOf(sandbox, clusterGateway, { cluster: true });
  }
  console.log(`machine: ${machineLine()}`);
  console.log(
    `sandbox pid ${stack.sandboxPid} at ${sandbox.url}; gateway pid ${stack.gatewayPid} at ${gateway.url}` +
      (cachedStack ? `; gateway with the cache on pid ${cachedStack.gatewayPid}` : '') +
      (workersStack ? `; WORKERS=${workers} pids ${workersStack.gatewayPids?.().join(', ')}` : '') +
      (stack.others.floor ? `; floor pid ${stack.others.floor.pid}` : '') +
      (stack.others['yoga-floor'] ? `; Yoga floor pid ${stack.others['yoga-floor'].pid}` : '') +
      (stack.others.before ? `; before (${options.before}) pid ${stack.others.before.pid}` : '') +
      `; started in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
  );

  const runs: RunRecord[] = [];
  const warmed = new Set<number>();
  for (const [scenario, side, connections] of runsPlanned) {
    const on =
      scenario.cached && cachedStack
        ? cachedStack
        : scenario.workers && workersStack
          ? workersStack
          : stack;
    const run = await measure(on, scenario, side, connections, timing, warmed);
    runs.push(run);
    console.log(summaryLine(run));
    for (const problem of run.problems) console.log(`  ! ${problem}`);
  }
  await stack.controls.setLatency(0);
  const authAb =
    !options.only || options.only.has('list')
      ? await authenticationAb(sandbox.url, options.quick, services)
      : undefined;
  const authInProcess =
    !options.only || options.only.has('list')
      ? await authenticationInProcess(options.quick)
      : undefined;
  const fanOut = !options.only
    ? await subscriptions(sandbox.url, options.quick, services)
    : undefined;

  const idle = !options.only ? await idleMemory(sandbox.url, services) : undefined;

  const info: RunInfo = {
    mode: options.quick ? 'quick' : 'full',
    date: new Date(),
    durationS: timing.durationS,
    warmupRequests: timing.warmupRequests,
    firstWarmupRequests: timing.firstWarmupRequests,
    saturatingConnections: options.connections,
    clockTicks: clockTicksPerSecond(),
    nodeEnv: process.env.NODE_ENV ?? 'production',
    loadAverage,
    authAb,
    authInProcess,
    subscriptions: fanOut,
    idle,
  };
  const problems = [...runs.flatMap((run) => run.problems), ...(fanOut?.problems ?? [])];
  const report = renderReport(byScenario(runs), info, problems);
  console.log(`\n${report}`);
  if (options.write) {
    writeReport(join(ROOT, 'BENCHMARKS.md'), report);
    console.log('wrote BENCHMARKS.md');
  }
  console.log(`done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  if (problems.length > 0) {
    console.error(`\n${problems.length} problem(s): requests failed or returned errors (above).`);
    return 1;
  }
  return 0;
}

/** How long a gateway is left alone before its idle memory is read: V8 shrinks its heap by then. */
const IDLE_WAIT_MS = 25_000;

/**
 * A gateway's resident memory at rest, as `npm start` leaves it (the page cache's default TTL):
 * started, one list query answered, then left alone {@link IDLE_WAIT_MS} (V8's memory reducer
 * gives back the young generation's room some 10–20 s after the last work).
 */
async function idleMemory(
  upstreamUrl: string,
  services: Service[],
): Promise<NonNullable<RunInfo['idle']>> {
  // Both at once (the wait is the same): the gateway, and the Yoga floor for what Yoga alone holds.
  const [gateway, yogaFloor] = await Promise.all([
    startGateway(upstreamUrl, { name: 'gateway (idle)', env: { CACHE_TTL_SECONDS: '60' } }),
    startFloor(upstreamUrl, 'yoga-floor'),
  ]);
  services.push(gateway, yogaFloor);
  try {
    const query = JSON.stringify({ query: LIST_QUERY });
    for (const service of [gateway, yogaFloor]) {
      await load(service.url, query, { 'x-api-key': API_KEY }, 1, 1);
    }
    await new Promise((resolve) => setTimeout(resolve, IDLE_WAIT_MS));
    const [rssMb, yogaFloorRssMb] = [gateway, yogaFloor].map(
      (service) => memory(servingPid(service)).rssMb,
    ) as [number, number];
    console.log(
      `idle gateway: RSS ${rssMb.toFixed(1)} MB after one query and ${IDLE_WAIT_MS / 1000} s ` +
        `(the Yoga floor: ${yogaFloorRssMb.toFixed(1)} MB)`,
    );
    return { rssMb, waitedS: IDLE_WAIT_MS / 1000, yogaFloorRssMb };
  } finally {
    await Promise.all([stopService(gateway, 10_000), stopService(yogaFloor, 10_000)]);
  }
}

async function profile(options: Options, services: Service[]): Promise<number> {
  const timing = timingFor(options.quick);
  const dir = join(TMP, `profile-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  mkdirSync(dir, { recursive: true });
  const sandbox = await startSandbox(START_TIMEOUT_MS);
  services.push(sandbox);
  const id = options.only?.size === 1 ? [...options.only][0] : 'list';
  const scenario = SCENARIOS.find((s) => s.id === id) as Scenario;
  const nodeFlags = ['--cpu-prof', `--cpu-prof-dir=${dir}`];
  // The Yoga floor stands where the gateway would: the same load, the same summary.
  const gateway = options.profileYogaFloor
    ? await startFloor(sandbox.url, 'yoga-floor', nodeFlags)
    : await startGateway(sandbox.url, { cached: scenario.cached, nodeFlags });
  services.push(gateway);
  const stack = stackOf(sandbox, gateway);
  const target = loadTarget(stack, scenario, 'gateway');
  await runLoad(target, options.connections, {
    amount: timing.firstWarmupRequests,
    maxMs: timing.firstWarmupMaxMs,
  });
  const runStart = performance.now();
  const cpuBefore = cpuTimeMs(stack.gatewayPid);
  const load = await runLoad(target, options.connections, { durationS: timing.durationS });
  const cpuMs = cpuTimeMs(stack.gatewayPid) - cpuBefore;
  await stopService(gateway, 10_000);
  const windowMs = performance.now() - runStart;
  console.log(
    `${scenario.id} via ${options.profileYogaFloor ? 'the Yoga floor' : 'gateway'} (profiled), c=${options.connections}: ${load.requestsPerSecond.toFixed(0)} req/s, ` +
      `p50 ${load.p50Ms.toFixed(2)} ms, CPU ${(cpuMs / load.responses).toFixed(3)} ms/req, ${load.failures} failed\n`,
  );
  const file = mainThreadProfile(dir, stack.gatewayPid);
  if (!file) {
    console.error(`no main-thread .cpuprofile in ${dir}; gateway output:\n${gateway.output()}`);
    return 1;
  }
  console.log(formatProfile(summarizeProfile(file, ROOT, windowMs)));
  console.log(`\nprofile: ${file} (open in Chrome DevTools > Performance, or speedscope)`);
  return 0;
}

async function main(): Promise<void> {
  let options: Options | null;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    console.error(`bench: ${error instanceof Error ? error.message : String(error)}\n\n${HELP}`);
    process.exitCode = 2;
    return;
  }
  if (options === null) {
    console.log(HELP);
    return;
  }
  const services: Service[] = [];
  const stopAll = () => Promise.all(services.map((service) => stopService(service)));
  let interrupted = false;
  const onSignal = (signal: NodeJS.Signals) => {
    interrupted = true;
    console.error(`\nbench: ${signal}, stopping the servers`);
    void stopAll().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  // A hard bound on the whole run, whatever hangs: about three times a quick run's length on this
  // machine on a good day (150 s), since the same machine ran everything up to five times slower
  // on another (2026-11-27: the sandbox's direct list at 1,051 req/s against 5,000).
  const limitMs = options.quick ? 480_000 : 900_000;
  const watchdog = setTimeout(() => {
    console.error(`bench: still running after ${limitMs / 1000} s, giving up`);
    for (const service of services) service.child.kill('SIGKILL');
    process.exit(1);
  }, limitMs);
  watchdog.unref();
  try {
    process.exitCode = options.profile
      ? await profile(options, services)
      : await benchmark(options, services);
  } catch (error) {
    // After a signal, failures of the interrupted run are expected noise.
    if (!interrupted)
      console.error(`bench: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  } finally {
    await stopAll();
    clearTimeout(watchdog);
  }
}

await main();
