import { medianBlockRatio, type AbResult } from './interleaved.js';
import type { FanOutResult } from './subscribers.js';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem, platform, arch } from 'node:os';
import type { RunRecord } from './measure.js';
import type { ScenarioId } from './scenarios.js';

/** Everything after this line of BENCHMARKS.md is hand-written and kept when it is regenerated. */
export const NOTES_MARKER = '<!-- notes -->';

const DEFAULT_NOTES = `${NOTES_MARKER}

## Notes

Hand-written; \`npm run bench\` keeps everything from the marker above onwards.
`;

/** The machine and settings a run used, for the report header. */
export interface RunInfo {
  mode: 'quick' | 'full';
  date: Date;
  durationS: number;
  warmupRequests: number;
  /** The warm-up of a server's first run (its process's first requests). */
  firstWarmupRequests: number;
  saturatingConnections: number;
  clockTicks: number;
  nodeEnv: string;
  /** 1-minute load average when the run started: other work on the machine skews the figures. */
  loadAverage: number;
  /**
   * The interleaved A/B of `AUTH_MODE=jwt` with a quota against `api-key` without one (the same
   * build, the list), when it ran.
   */
  authAb?: { apiKey: AbResult; jwt: AbResult; blocks: number; block: number; concurrency: number };
  /**
   * The same A/B in one process (`bench/auth-in-process.ts`), after an A/A of two api-key
   * gateways: CPU ms per request of each side, and the median of the turns' ratios.
   */
  authInProcess?: {
    requests: number;
    aa: { apiKeyMs: number; jwtMs: number; median: number };
    ab: { apiKeyMs: number; jwtMs: number; median: number };
  };
  /** SSE subscribers over 10 filters on one gateway, one new event per filter, when it ran. */
  subscriptions?: FanOutResult;
  /**
   * RSS at rest, one query answered, then left alone `waitedS` seconds: the gateway's, and the
   * Yoga floor's (bench/yoga-floor-server.mjs) beside it.
   */
  idle?: { rssMb: number; waitedS: number; yogaFloorRssMb: number };
}

/** The subscription targets: new event within a second of its poll, RSS growth. */
const SUBSCRIPTION_LATENCY_MS = 1_000;
const SUBSCRIPTION_RSS_MB = 100;

/** Where the subscription fan-out stands against its targets. */
export function subscriptionTargets(fan: FanOutResult): TargetStatus[] {
  const all = fan.delivered === fan.subscribers;
  const growth = fan.rssAfterMb - fan.rssBeforeMb;
  const of = `${fan.subscribers} SSE subscribers, ${fan.filters} filters`;
  return [
    {
      name: `subscriptions: pollers, ${of}`,
      goal: `${fan.filters} (one per filter)`,
      measured: String(fan.pollers),
      met: fan.pollers === fan.filters,
    },
    {
      name: `subscriptions: new event at every subscriber after the poll that finds it, ${of}`,
      goal: `≤ ${SUBSCRIPTION_LATENCY_MS} ms (max)`,
      measured:
        `max ${num(fan.maxLatencyMs, 0)} ms, p99 ${num(fan.p99LatencyMs, 0)} ms, ` +
        `p50 ${num(fan.p50LatencyMs, 0)} ms; delivered to ${fan.delivered}/${fan.subscribers}`,
      met: all && fan.maxLatencyMs <= SUBSCRIPTION_LATENCY_MS,
    },
    {
      name: `subscriptions: gateway RSS growth, ${of}`,
      goal: `< ${SUBSCRIPTION_RSS_MB} MB`,
      measured: `${num(growth, 0)} MB (${num(fan.rssBeforeMb, 0)} → ${num(fan.rssAfterMb, 0)})`,
      met: growth < SUBSCRIPTION_RSS_MB,
    },
  ];
}

/** Issue 24's bound: jwt with a quota costs at most this much more CPU per request. */
const AUTH_CPU_BOUND = 1.1;

/** The A/B's table: CPU and latency per request of each side, and their ratio. */
function authAbTable(ab: NonNullable<RunInfo['authAb']>): string {
  const row = (name: string, side: AbResult) =>
    `| ${name} | ${side.cpuMs.toFixed(3)} ms | ${side.latencyMs.toFixed(2)} ms |`;
  return [
    '| gateway | CPU per request | mean latency |',
    '|---|---|---|',
    row('`AUTH_MODE=api-key`, no quota', ab.apiKey),
    row('`AUTH_MODE=jwt`, `CREDIT_QUOTA` in memory', ab.jwt),
    `| ratio (jwt ÷ api-key) | ${(ab.jwt.cpuMs / ab.apiKey.cpuMs).toFixed(3)} | ${(ab.jwt.latencyMs / ab.apiKey.latencyMs).toFixed(3)} |`,
    `| ratio over the whole run (deferred work counted) | ${(ab.jwt.spanCpuMs / ab.apiKey.spanCpuMs).toFixed(3)} | |`,
    `| median of the ${ab.blocks} block ratios | ${medianBlockRatio(ab.apiKey, ab.jwt).toFixed(3)} | |`,
  ].join('\n');
}

/** The in-process A/A and A/B of issue 24, side by side. */
function authInProcessTable(ab: NonNullable<RunInfo['authInProcess']>): string {
  const row = (name: string, side: { apiKeyMs: number; jwtMs: number; median: number }) =>
    `| ${name} | ${side.apiKeyMs.toFixed(3)} ms | ${side.jwtMs.toFixed(3)} ms | ${(side.jwtMs / side.apiKeyMs).toFixed(3)} | ${side.median.toFixed(3)} |`;
  return [
    '| run | first side | second side | ratio | median of the turns |',
    '|---|---|---|---|---|',
    row('A/A: api-key, api-key', ab.aa),
    row('A/B: api-key, jwt with a quota', ab.ab),
  ].join('\n');
}

/**
 * Issue 39's memory bounds: the gateway's RSS at most the Yoga floor's plus this much, at its peak
 * under the same load, and at rest.
 */
export const PEAK_RSS_OVER_YOGA_FLOOR_MB = 30;
export const IDLE_RSS_OVER_YOGA_FLOOR_MB = 10;

/** The run of `side` (one process, not WORKERS) with the highest peak RSS, among `ids` if given. */
function peakRun(runs: RunRecord[], side: RunRecord['side'], ids?: Set<ScenarioId>) {
  return runs
    .filter((r) => r.side === side && !r.scenario.workers && (!ids || ids.has(r.scenario.id)))
    .reduce<RunRecord | undefined>(
      (top, r) => (!top || r.memory.peakRssMb > top.memory.peakRssMb ? r : top),
      undefined,
    );
}

/** Issue 39's memory targets: the gateway's RSS beside the Yoga floor's, at peak and at rest. */
function memoryTargets(runs: RunRecord[], info: RunInfo): TargetStatus[] {
  // The same load on both: the scenarios the Yoga floor answered in this run (VmHWM is the peak
  // since the process started, so the last of them holds the peak over all).
  const yogaRan = new Set(runs.filter((r) => r.side === 'yoga-floor').map((r) => r.scenario.id));
  const gateway = peakRun(runs, 'gateway', yogaRan);
  const yoga = peakRun(runs, 'yoga-floor');
  const overall = peakRun(runs, 'gateway');
  const peakMet =
    gateway && yoga
      ? gateway.memory.peakRssMb <= yoga.memory.peakRssMb + PEAK_RSS_OVER_YOGA_FLOOR_MB
      : null;
  const idle = info.idle;
  return [
    {
      name:
        "gateway peak RSS under the bench's load (one process) against the Yoga floor's, " +
        `over the same scenarios (${[...yogaRan].join(', ') || '—'})`,
      goal: `≤ the Yoga floor's + ${PEAK_RSS_OVER_YOGA_FLOOR_MB} MB`,
      measured:
        gateway && yoga
          ? `${num(gateway.memory.peakRssMb, 0)} vs ${num(yoga.memory.peakRssMb, 0)} MB ` +
            `(${signed(gateway.memory.peakRssMb - yoga.memory.peakRssMb, 0)} MB); ` +
            `the gateway's peak over the whole bench ${num(overall?.memory.peakRssMb, 0)} MB ` +
            `(by the end of ${overall?.scenario.id} c=${overall?.load.connections})`
          : '—',
      met: peakMet,
    },
    {
      name: 'gateway RSS at rest (one query, then idle) against the Yoga floor, the same way',
      goal: `≤ the Yoga floor's + ${IDLE_RSS_OVER_YOGA_FLOOR_MB} MB`,
      measured: idle
        ? `${num(idle.rssMb, 1)} vs ${num(idle.yogaFloorRssMb, 1)} MB ` +
          `(${signed(idle.rssMb - idle.yogaFloorRssMb, 1)} MB) after ${idle.waitedS} s`
        : '—',
      met: idle ? idle.rssMb <= idle.yogaFloorRssMb + IDLE_RSS_OVER_YOGA_FLOOR_MB : null,
    },
  ];
}

/** One target of the issue and where this run stands. */
export interface TargetStatus {
  name: string;
  goal: string;
  measured: string;
  /** null when the run has no figure for it (scenario skipped or failed). */
  met: boolean | null;
}

/** Slack allowed on top of N round trips ("60 ms plus a few ms"). */
const ROUND_TRIP_SLACK_MS = 5;

function num(value: number | undefined, digits: number): string {
  return value === undefined || !Number.isFinite(value) ? '—' : value.toFixed(digits);
}

/** A difference, with its sign. */
function signed(value: number, digits: number): string {
  return Number.isFinite(value) && value >= 0 ? `+${num(value, digits)}` : num(value, digits);
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((cell, i) =>
    Math.max(cell.length, ...rows.map((row) => (row[i] ?? '').length)),
  );
  const line = (cells: string[]) =>
    `| ${cells.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  const rule = `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

function find(runs: RunRecord[], id: ScenarioId, side: RunRecord['side'], connections: number) {
  return runs.find(
    (r) => r.scenario.id === id && r.side === side && r.load.connections === connections,
  );
}

function sampledAndCounted(sampled: number | undefined, counted: number | undefined) {
  return `${num(sampled, Number.isInteger(sampled) ? 0 : 2)} (${num(counted, 2)})`;
}

/** The table of every run. */
export function runsTable(runs: RunRecord[]): string {
  return table(
    [
      'scenario',
      'target',
      'conc',
      'req/s',
      'p50 ms',
      'p99 ms',
      'CPU ms/req',
      'sandbox CPU ms/req',
      'RSS MB (peak)',
      'upstream req/query',
      'credits/query',
      'records/query',
      'failed',
    ],
    runs.map((r) => [
      r.scenario.id,
      r.side,
      String(r.load.connections),
      num(r.load.requestsPerSecond, 0),
      num(r.load.p50Ms, 2),
      num(r.load.p99Ms, 2),
      num(r.cpuMsPerRequest, 3),
      r.side !== 'direct' ? num(r.sandboxCpuMsPerRequest, 3) : '—',
      `${num(r.memory.rssMb, 0)} (${num(r.memory.peakRssMb, 0)})`,
      sampledAndCounted(r.sample?.upstreamRequests, r.counted?.upstreamRequests),
      sampledAndCounted(r.sample?.credits, r.counted?.credits),
      num(r.sample?.records, 0),
      String(r.load.failures),
    ]),
  );
}

/** Gateway figures divided by direct ones, for the scenarios measured both ways. */
export function ratiosTable(runs: RunRecord[]): string {
  const rows: string[][] = [];
  for (const gateway of runs) {
    if (gateway.side !== 'gateway') continue;
    const direct = find(runs, gateway.scenario.id, 'direct', gateway.load.connections);
    if (!direct) continue;
    const ratio = (a: number, b: number) => num(a / b, 2);
    rows.push([
      gateway.scenario.id,
      String(gateway.load.connections),
      ratio(gateway.load.requestsPerSecond, direct.load.requestsPerSecond),
      ratio(gateway.load.p50Ms, direct.load.p50Ms),
      ratio(gateway.load.p99Ms, direct.load.p99Ms),
      num(gateway.load.p50Ms - direct.load.p50Ms, 2),
      ratio(gateway.cpuMsPerRequest, direct.cpuMsPerRequest),
      ratio(gateway.cpuMsPerRequest + gateway.sandboxCpuMsPerRequest, direct.cpuMsPerRequest),
      ratio(gateway.memory.peakRssMb, direct.memory.peakRssMb),
      ratio(gateway.sample?.upstreamRequests ?? NaN, direct.sample?.upstreamRequests ?? NaN),
      ratio(gateway.sample?.credits ?? NaN, direct.sample?.credits ?? NaN),
    ]);
  }
  return table(
    [
      'scenario',
      'conc',
      'req/s',
      'p50',
      'p99',
      'p50 added ms',
      'CPU/req (serving)',
      'CPU/req (gateway+sandbox)',
      'peak RSS',
      'upstream req',
      'credits',
    ],
    rows,
  );
}

/**
 * Issue 39's bound: uncached, the gateway's CPU per request at most this multiple of the Yoga
 * floor's (bench/yoga-floor-server.mjs) for the same query in the same run, at c=1 and at the
 * saturating concurrency.
 */
export const YOGA_FLOOR_CPU_BOUND = 1.15;

/** The scenarios that bound holds for, each with how the targets table names it. */
const YOGA_FLOOR_CPU_SCENARIOS: readonly [ScenarioId, string][] = [
  ['list', '20-record list'],
  ['wide', '100-record list'],
  ['walk', 'the walk (21 upstream requests a query)'],
];

/** The gateway's CPU per request ÷ the Yoga floor's, same scenario and concurrency; else undefined. */
function overYogaFloor(runs: RunRecord[], id: ScenarioId, connections: number) {
  const gateway = find(runs, id, 'gateway', connections);
  const yoga = find(runs, id, 'yoga-floor', connections);
  return gateway && yoga
    ? { gateway, yoga, ratio: gateway.cpuMsPerRequest / yoga.cpuMsPerRequest }
    : undefined;
}

/**
 * CPU per request of each server in front of the sandbox, for the scenarios the floors answer:
 * divided by the sandbox's own serving the same list directly (the `direct` run at the same
 * concurrency; ms alone when there is no direct call, as for the walk), then this build's ÷ the
 * Yoga floor's, issue 39's measure.
 */
export function cpuAgainstServiceTable(runs: RunRecord[]): string {
  const rows: string[][] = [];
  for (const gateway of runs) {
    if (gateway.side !== 'gateway' || !gateway.scenario.floors) continue;
    const { id } = gateway.scenario;
    const c = gateway.load.connections;
    const direct = find(runs, id, 'direct', c);
    const cell = (side: RunRecord['side']) => {
      const run = find(runs, id, side, c);
      if (!run) return '—';
      const ms = `${num(run.cpuMsPerRequest, 3)} ms`;
      return direct ? `${num(run.cpuMsPerRequest / direct.cpuMsPerRequest, 2)} (${ms})` : ms;
    };
    rows.push([
      id,
      String(c),
      direct ? `${num(direct.cpuMsPerRequest, 3)} ms` : '—',
      cell('floor'),
      cell('yoga-floor'),
      cell('before'),
      cell('gateway'),
      num(overYogaFloor(runs, id, c)?.ratio, 2),
      `≤ ${YOGA_FLOOR_CPU_BOUND}`,
    ]);
  }
  return table(
    [
      'scenario',
      'conc',
      'sandbox, direct',
      'floor',
      'Yoga floor',
      'before',
      'this build',
      'this build ÷ Yoga floor',
      'goal',
    ],
    rows,
  );
}

/** Wall time of the latency-bound scenarios in sandbox round trips. */
export function roundTripsTable(runs: RunRecord[]): string {
  const rows = runs
    .filter((r) => r.scenario.sandboxLatencyMs > 0)
    .map((r) => [
      r.scenario.id,
      String(r.load.connections),
      `${r.scenario.sandboxLatencyMs}`,
      num(r.load.p50Ms, 1),
      num(r.load.p99Ms, 1),
      num(r.load.p50Ms / r.scenario.sandboxLatencyMs, 2),
      num(r.sample?.upstreamRequests, 0),
    ]);
  return table(
    [
      'scenario',
      'conc',
      'round trip ms',
      'p50 ms',
      'p99 ms',
      'p50 / round trip',
      'upstream req/query',
    ],
    rows,
  );
}

/** Where each target of the issue stands in this run. */
export function evaluateTargets(runs: RunRecord[], saturating: number): TargetStatus[] {
  const targets: TargetStatus[] = [];

  // Issue 39: uncached, the gateway's CPU beside the Yoga floor's for the same query, same run.
  for (const [id, label] of YOGA_FLOOR_CPU_SCENARIOS) {
    const levels = [1, saturating].map((c) => ({ c, against: overYogaFloor(runs, id, c) }));
    targets.push({
      name: `${label}, uncached: gateway CPU per request ÷ the Yoga floor's (same run)`,
      goal: `≤ ${YOGA_FLOOR_CPU_BOUND} at c=1 and c=${saturating}`,
      measured: levels
        .map(({ c, against }) =>
          against
            ? `c=${c}: ${num(against.gateway.cpuMsPerRequest, 3)} vs ${num(against.yoga.cpuMsPerRequest, 3)} ms = ${num(against.ratio, 2)}`
            : `c=${c}: —`,
        )
        .join('; '),
      met: levels.every(({ against }) => against)
        ? levels.every(({ against }) => against!.ratio <= YOGA_FLOOR_CPU_BOUND)
        : null,
    });
  }

  const listSat = find(runs, 'list', 'gateway', saturating);
  const listOne = find(runs, 'list', 'gateway', 1);

  const workersSat = find(runs, 'list-2-workers', 'gateway', saturating);
  if (workersSat) {
    const scale = listSat
      ? workersSat.load.requestsPerSecond / listSat.load.requestsPerSecond
      : NaN;
    targets.push({
      name: `WORKERS=2 against one process, 20-record list, c=${saturating}`,
      goal: 'more req/s (the 2 cores also run the sandbox and the load)',
      measured: `${num(scale, 2)}× (${num(workersSat.load.requestsPerSecond, 0)} vs ${num(listSat?.load.requestsPerSecond, 0)} req/s); CPU ${num(workersSat.cpuMsPerRequest, 3)} vs ${num(listSat?.cpuMsPerRequest, 3)} ms/req`,
      met: Number.isFinite(scale) ? scale > 1 : null,
    });
  }

  const directOne = find(runs, 'list', 'direct', 1);
  const added = listOne && directOne ? listOne.load.p50Ms - directOne.load.p50Ms : undefined;
  targets.push({
    name: 'p50 added over direct REST, 20-record list, c=1',
    goal: '< 1.5 ms',
    measured: `${num(added, 2)} ms (${num(listOne?.load.p50Ms, 2)} vs ${num(directOne?.load.p50Ms, 2)})`,
    met: added === undefined || !Number.isFinite(added) ? null : added < 1.5,
  });

  for (const [id, trips] of [
    ['walk-20ms', 3],
    ['fan-out-50ms', 3],
  ] as const) {
    const run = find(runs, id, 'gateway', 1);
    const rt = run?.scenario.sandboxLatencyMs ?? NaN;
    const limit = trips * rt + ROUND_TRIP_SLACK_MS;
    targets.push({
      name: `${id} wall time per query (p50)`,
      goal: `< ${trips} round trips (${num(limit, 0)} ms)`,
      measured: run
        ? `${num(run.load.p50Ms, 1)} ms = ${num(run.load.p50Ms / rt, 2)} round trips`
        : '—',
      met: run && run.load.failures === 0 ? run.load.p50Ms < limit : null,
    });
  }

  // Repeat views (issue 27): an exact repeat is answered whole, from the kept answer's bytes.
  for (const connections of [1, saturating]) {
    const repeat = find(runs, 'list-cached', 'gateway', connections);
    const direct = find(runs, 'list-cached', 'direct', connections);
    const throughput =
      repeat && direct ? repeat.load.requestsPerSecond / direct.load.requestsPerSecond : undefined;
    targets.push({
      name: `repeat view, 20-record list: throughput ÷ direct REST, c=${connections}`,
      goal: '≥ 1.5',
      measured: `${num(throughput, 2)} (${num(repeat?.load.requestsPerSecond, 0)} vs ${num(direct?.load.requestsPerSecond, 0)} req/s)`,
      met: throughput === undefined ? null : throughput >= 1.5,
    });
    targets.push({
      name: `repeat view, 20-record list: gateway CPU per request, c=${connections}`,
      goal: '≤ 0.25 ms',
      measured: `${num(repeat?.cpuMsPerRequest, 3)} ms`,
      met: repeat ? repeat.cpuMsPerRequest <= 0.25 : null,
    });
  }
  const cachedRuns = runs.filter((r) => r.scenario.cached && r.side === 'gateway' && r.counted);
  targets.push({
    name: 'cache hits: upstream requests and credits per query',
    goal: '0 after the warm-up',
    measured:
      cachedRuns
        .map(
          (r) =>
            `${r.scenario.id} c=${r.load.connections}: ${num(r.counted!.upstreamRequests, 3)} / ${num(r.counted!.credits, 3)}`,
        )
        .join(', ') || '—',
    met:
      cachedRuns.length === 0
        ? null
        : cachedRuns.every((r) => r.counted!.upstreamRequests === 0 && r.counted!.credits === 0),
  });

  const gatewayRuns = runs.filter(
    (r) => r.side === 'gateway' && r.load.connections === 1 && !r.scenario.cached,
  );
  const creditChecks = gatewayRuns.map((r) => ({
    id: r.scenario.id,
    credits: r.sample?.credits,
    records: r.sample?.records,
  }));
  targets.push({
    name: 'credits per query = records returned',
    goal: 'equal, every uncached gateway scenario',
    measured:
      creditChecks.map((c) => `${c.id} ${num(c.credits, 0)}/${num(c.records, 0)}`).join(', ') ||
      '—',
    met:
      creditChecks.length === 0 || creditChecks.some((c) => c.credits === undefined)
        ? null
        : creditChecks.every((c) => c.credits === c.records),
  });
  return targets;
}

function status(met: boolean | null) {
  return met === null ? 'n/a' : met ? 'met' : 'MISSED';
}

/** The targets as a table. */
export function targetsTable(targets: TargetStatus[]): string {
  return table(
    ['target', 'goal', 'measured', 'status'],
    targets.map((t) => [t.name, t.goal, t.measured, status(t.met)]),
  );
}

/** One line describing the machine. */
export function machineLine(): string {
  const cpu = cpus();
  const model = cpu[0]?.model.trim() ?? 'unknown CPU';
  const gib = totalmem() / 1024 ** 3;
  return `${cpu.length} cores (${model}), ${gib.toFixed(1)} GiB memory, Node ${process.version}, ${platform()} ${arch()}`;
}

/** The generated part of BENCHMARKS.md (everything before the notes). */
export function renderReport(runs: RunRecord[], info: RunInfo, problems: string[]): string {
  const targets = evaluateTargets(runs, info.saturatingConnections);
  const sections = [
    '# Benchmarks',
    [
      `Generated by \`npm run bench${info.mode === 'quick' ? ' -- --quick' : ''}\` on ${info.date.toISOString()} (mode: ${info.mode}).`,
      'Everything above the notes marker is rewritten by each run.',
    ].join(' '),
    [
      `- Machine: ${machineLine()}; 1-minute load average at start ${info.loadAverage.toFixed(2)}.`,
      `- Sandbox and gateway run as separate processes on loopback, from the compiled build in dist/ (\`npm run build\`; NODE_ENV=${info.nodeEnv}); autocannon runs in the harness process on the same machine, so at saturation the three share the cores.`,
      `- Each run: warm-up (up to ${info.warmupRequests} requests; up to ${info.firstWarmupRequests} on a server's first run, since V8 optimizes only after thousands of calls), then ${info.durationS} s of load at concurrency 1 and ${info.saturatingConnections}; every scenario at concurrency 1 first, then at ${info.saturatingConnections}.`,
      '- Latency: per-response wall time from autocannon (unrounded). CPU: utime+stime of the serving process from /proc/<pid>/stat ' +
        `(${info.clockTicks} ticks/s) over the run, divided by requests sent (the responses plus the few still in flight when the load stopped; the harness waits until the sandbox sees no more requests before reading). RSS: VmRSS after the run (VmHWM, the peak since start, in parentheses).`,
      '- At low request rates (the latency-bound scenarios) CPU per request also carries the background work (timers, GC), so it reads high there.',
      '- Upstream req/query and credits/query: the mean of 3 sample responses (`extensions` for the gateway; `meta.creditsUsed` for REST), then in parentheses the sandbox counters (requests, records) over the whole run divided by requests sent.',
    ].join('\n'),
    '## Runs',
    runsTable(runs),
    '## Gateway / direct',
    'Ratios of gateway to direct figures at the same concurrency; "p50 added" is the difference in ms. ' +
      'CPU/req (serving) compares the gateway process with the sandbox serving REST directly; (gateway+sandbox) adds the sandbox CPU behind the gateway.',
    ratiosTable(runs),
    '## CPU against the service',
    "CPU per request divided by the sandbox's serving the same list directly (issue 13's measure), " +
      'with the CPU per request in parentheses (ms alone for the walk, which has no direct call). The floor is bench/floor-server.mjs: node:http in, one undici GET, ' +
      '`JSON.parse`, the fields copied, `JSON.stringify`; no GraphQL, ids unsigned, no errors, budget, logs or metrics: ' +
      'the least any Node server in this place costs (it answers the two lists only). The Yoga floor is bench/yoga-floor-server.mjs: the same upstream work ' +
      "under a bare Yoga with the gateway's schema and graphql-jit, three resolvers (the lists, and a company's exec moves for the walk: one GET each, as the gateway sends it) and nothing else of ours: the least a " +
      'gateway built on Yoga costs. "before" is the build given with `--before` (— when none). ' +
      `"this build ÷ Yoga floor" is issue 39's measure, its goal ≤ ${YOGA_FLOOR_CPU_BOUND}.`,
    cpuAgainstServiceTable(runs),
    '## Latency-bound scenarios',
    'The sandbox adds a fixed delay to every request; wall time per query in those round trips.',
    roundTripsTable(runs),
    ...(info.authAb
      ? [
          '## Authentication A/B',
          `Two gateways of this build at once, the list at c=${info.authAb.concurrency}, ${info.authAb.blocks} blocks of ${info.authAb.block} requests to each in alternating order, CPU read around each block: a bearer token verified (cached after the first) and a quota reserved and settled per operation, against an API key.`,
          authAbTable(info.authAb),
        ]
      : []),
    ...(info.authInProcess
      ? [
          `The same in one process (\`bench/auth-in-process.ts\`): both gateways' fetch handlers (as \`createGateway\` composes them, the upstream a sandbox in another process) take turns of 50 requests, ${info.authInProcess.requests} in all, CPU from \`process.cpuUsage()\` (microseconds, not /proc's 10 ms ticks); the HTTP server and client, the same on both sides, are left out, so the ratio is over a smaller denominator and overstates the difference. First an A/A, both sides \`api-key\`.`,
          authInProcessTable(info.authInProcess),
        ]
      : []),
    ...(info.subscriptions
      ? [
          '## Subscriptions',
          `A gateway of its own with POLL_INTERVAL_SECONDS=1: ${info.subscriptions.subscribers} \`fundingEventAdded\` subscriptions over SSE, each on its own connection, spread evenly over ${info.subscriptions.filters} round filters; once every filter has polled, one new event per filter in the sandbox. Latency: from the sandbox's receive time of the poll that found the event (\`at\` in its request log) to the payload's arrival at the subscriber. RSS: VmRSS before the subscribers connected and once the events reached them.`,
        ]
      : []),
    '## Targets',
    targetsTable([
      ...targets,
      ...(info.subscriptions ? subscriptionTargets(info.subscriptions) : []),
      ...memoryTargets(runs, info),
      ...(info.authAb
        ? [
            {
              name: 'jwt with a quota ÷ api-key without one, CPU per request (interleaved A/B, median of the block ratios)',
              goal: `≤ ${AUTH_CPU_BOUND}`,
              measured: `${medianBlockRatio(info.authAb.apiKey, info.authAb.jwt).toFixed(3)} (sums ${(info.authAb.jwt.cpuMs / info.authAb.apiKey.cpuMs).toFixed(3)}, whole run ${(info.authAb.jwt.spanCpuMs / info.authAb.apiKey.spanCpuMs).toFixed(3)})`,
              met: medianBlockRatio(info.authAb.apiKey, info.authAb.jwt) <= AUTH_CPU_BOUND,
            },
          ]
        : []),
      ...(info.authInProcess
        ? [
            {
              name: 'the same in one process (jwt with a quota ÷ api-key, CPU per request; A/A beside it)',
              goal: `≤ ${AUTH_CPU_BOUND}`,
              measured: `${(info.authInProcess.ab.jwtMs / info.authInProcess.ab.apiKeyMs).toFixed(3)} (median ${info.authInProcess.ab.median.toFixed(3)}; A/A ${(info.authInProcess.aa.jwtMs / info.authInProcess.aa.apiKeyMs).toFixed(3)})`,
              met: info.authInProcess.ab.jwtMs / info.authInProcess.ab.apiKeyMs <= AUTH_CPU_BOUND,
            },
          ]
        : []),
    ]),
  ];
  if (problems.length > 0) {
    sections.push('## Problems in this run', problems.map((p) => `- ${p}`).join('\n'));
  }
  return `${sections.join('\n\n')}\n`;
}

/** Writes BENCHMARKS.md: the generated report, then the hand-written notes kept from the old file. */
export function writeReport(path: string, generated: string): void {
  let notes = DEFAULT_NOTES;
  if (existsSync(path)) {
    const old = readFileSync(path, 'utf8');
    const at = old.indexOf(NOTES_MARKER);
    if (at >= 0) notes = old.slice(at);
  }
  writeFileSync(path, `${generated}\n${notes.endsWith('\n') ? notes : `${notes}\n`}`);
}
