import { runLoad, type LoadResult, type LoadTarget } from './load.js';
import { cpuTimeMs, memory, type Memory } from './processes.js';
import { countRecords, type Scenario } from './scenarios.js';
import type { Counters, UpstreamControls } from './upstream-controls.js';

/**
 * Waits until the sandbox has seen no new request for a while (at least three of its round trips),
 * so that requests still in flight when a load run stops are counted with that run. Bounded.
 */
async function settle(controls: UpstreamControls, latencyMs: number): Promise<Counters> {
  const quietMs = Math.max(150, 3 * latencyMs + 50);
  const deadline = Date.now() + 3_000 + quietMs;
  let last = await controls.counters();
  let since = Date.now();
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    const now = await controls.counters();
    if (now.requests !== last.requests) {
      last = now;
      since = Date.now();
    } else if (Date.now() - since >= quietMs) {
      break;
    }
  }
  return last;
}

/**
 * Which way a run calls the service: REST directly, through the gateway, through the floor
 * (bench/floor-server.mjs: no GraphQL, the least a Node server in between does), through the Yoga
 * floor (bench/yoga-floor-server.mjs: the same under a bare Yoga, the least a Yoga gateway does),
 * or through an earlier build of the gateway (`--before <dist>`).
 */
export type Side = 'direct' | 'gateway' | 'floor' | 'yoga-floor' | 'before';

/** The sides served by a server of their own, besides the sandbox and the gateway. */
export type OtherSide = Exclude<Side, 'direct' | 'gateway'>;

/** A server the runs of one side go to, besides the gateway. */
export interface Server {
  url: string;
  pid: number;
}

/** The servers under test, with the pids that serve their ports. */
export interface Stack {
  sandboxUrl: string;
  gatewayUrl: string;
  sandboxPid: number;
  gatewayPid: number;
  /** The gateway's processes whose CPU counts (a cluster's primary and workers); else its pid. */
  gatewayPids?: () => number[];
  /** The floors and the earlier build, when the run has them. */
  others?: Partial<Record<OtherSide, Server>>;
  apiKey: string;
  controls: UpstreamControls;
}

function otherServer(stack: Stack, side: OtherSide): Server {
  const server = stack.others?.[side];
  if (!server) throw new Error(`this run has no ${side} server`);
  return server;
}

/** How long to warm up and to measure. */
export interface Timing {
  durationS: number;
  warmupRequests: number;
  warmupMaxMs: number;
  /**
   * The warm-up of a server's first run, before its own: a process started for the bench has run
   * none of its code yet, and V8 optimizes a hot function only after some thousands of calls,
   * while the sandbox it is compared with has served every run before. Measured on the repeat
   * view at c=1: its first 2 s after 200 requests ran 17% slower than the next, and the first 2 s
   * after 2,000 requests still 12% slower.
   */
  firstWarmupRequests: number;
  firstWarmupMaxMs: number;
}

/** What the responses of a few single requests said about cost. */
export interface Sample {
  /** Upstream requests per query (`extensions.upstreamRequests`; 1 for a direct call). */
  upstreamRequests: number;
  /** Credits per query (`extensions.credits.used`, or `meta.creditsUsed` for a direct call). */
  credits: number;
  /** Records in the answer (`nodes` elements, or `data` elements for a direct call). */
  records: number;
}

/** One measured run: a scenario on one side at one concurrency. */
export interface RunRecord {
  scenario: Scenario;
  side: Side;
  load: LoadResult;
  /** CPU time of the process serving the run (the sandbox for direct) per request sent. */
  cpuMsPerRequest: number;
  /** CPU time of the sandbox per response (equal to `cpuMsPerRequest` for direct runs). */
  sandboxCpuMsPerRequest: number;
  /** Memory of the serving process right after the run. */
  memory: Memory;
  sample: Sample | null;
  /** Sandbox counter deltas over the measured run, divided by the requests sent. */
  counted: { upstreamRequests: number; credits: number } | null;
  /** Errors seen in samples or under load; empty when all went well. */
  problems: string[];
}

/** The request a scenario sends on one side. */
export function loadTarget(stack: Stack, scenario: Scenario, side: Side): LoadTarget {
  if (side === 'direct') {
    if (!scenario.restPath) throw new Error(`${scenario.id} has no direct REST equivalent`);
    return {
      origin: stack.sandboxUrl,
      method: 'GET',
      path: scenario.restPath,
      headers: { 'x-api-key': stack.apiKey },
      verify: (body) => body.includes('"success":true'),
    };
  }
  return {
    origin: side === 'gateway' ? stack.gatewayUrl : otherServer(stack, side).url,
    method: 'POST',
    path: '/graphql',
    headers: {
      'content-type': 'application/json',
      accept: 'application/graphql-response+json, application/json',
      'x-api-key': stack.apiKey,
    },
    body: JSON.stringify({ query: scenario.query }),
    verify: (body) => !body.includes('"errors":'),
  };
}

interface GraphQLBody {
  data?: unknown;
  errors?: { message: string; extensions?: { code?: string } }[];
  extensions?: { credits?: { used?: number }; upstreamRequests?: number };
}

interface RestBody {
  success?: boolean;
  data?: unknown[];
  meta?: { creditsUsed?: number };
  error?: { code?: string; message?: string };
}

async function sampleOnce(target: LoadTarget, side: Side): Promise<Sample> {
  const response = await fetch(`${target.origin}${target.path}`, {
    method: target.method,
    headers: target.headers,
    ...(target.body === undefined ? {} : { body: target.body }),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`HTTP ${response.status}, not JSON: ${text.slice(0, 300)}`);
  }
  if (side === 'direct') {
    const rest = body as RestBody;
    if (!response.ok || rest.success !== true || !Array.isArray(rest.data)) {
      throw new Error(`HTTP ${response.status}: ${text.slice(0, 300)}`);
    }
    return {
      upstreamRequests: 1,
      credits: rest.meta?.creditsUsed ?? NaN,
      records: rest.data.length,
    };
  }
  const graphql = body as GraphQLBody;
  const first = graphql.errors?.[0];
  if (first) {
    const code = first.extensions?.code ? ` [${first.extensions.code}]` : '';
    const more =
      (graphql.errors?.length ?? 1) > 1 ? ` (+${(graphql.errors?.length ?? 1) - 1})` : '';
    throw new Error(`HTTP ${response.status}, GraphQL error${code}: ${first.message}${more}`);
  }
  return {
    upstreamRequests: graphql.extensions?.upstreamRequests ?? NaN,
    credits: graphql.extensions?.credits?.used ?? NaN,
    records: countRecords(graphql.data),
  };
}

/** Sends `count` single requests one after the other; every figure is their mean. */
async function sample(target: LoadTarget, side: Side, count: number) {
  const samples: Sample[] = [];
  for (let i = 0; i < count; i++) samples.push(await sampleOnce(target, side));
  const mean = (pick: (s: Sample) => number) =>
    samples.reduce((sum, s) => sum + pick(s), 0) / samples.length;
  const varies = samples.some(
    (s) => s.credits !== samples[0]?.credits || s.upstreamRequests !== samples[0]?.upstreamRequests,
  );
  return {
    sample: {
      upstreamRequests: mean((s) => s.upstreamRequests),
      credits: mean((s) => s.credits),
      records: mean((s) => s.records),
    },
    varies,
  };
}

function describe(scenario: Scenario, side: Side, connections: number) {
  return `${scenario.id} ${side} c=${connections}`;
}

/**
 * Warms the target up (longer on a server's first run: `warmed` holds the pids already run),
 * samples cost from single responses, then drives it for
 * `timing.durationS` while reading the serving processes' CPU time and the sandbox's counters
 * just before and after.
 */
export async function measure(
  stack: Stack,
  scenario: Scenario,
  side: Side,
  connections: number,
  timing: Timing,
  warmed: Set<number> = new Set(),
): Promise<RunRecord> {
  const label = describe(scenario, side, connections);
  const problems: string[] = [];
  const target = loadTarget(stack, scenario, side);
  await stack.controls.reset();
  await stack.controls.setLatency(scenario.sandboxLatencyMs);

  const servingPids =
    side === 'gateway'
      ? (stack.gatewayPids?.() ?? [stack.gatewayPid])
      : side === 'direct'
        ? [stack.sandboxPid]
        : [otherServer(stack, side).pid];
  const first = servingPids.some((pid) => !warmed.has(pid));
  for (const pid of servingPids) warmed.add(pid);
  const warm = await runLoad(target, connections, {
    amount: first ? timing.firstWarmupRequests : timing.warmupRequests,
    maxMs: first ? timing.firstWarmupMaxMs : timing.warmupMaxMs,
  });
  if (warm.failures > 0) problems.push(`${label}: ${warm.failures} failed requests in warm-up`);

  let sampled: Sample | null = null;
  try {
    const { sample: s, varies } = await sample(target, side, 3);
    sampled = s;
    if (varies) problems.push(`${label}: credits or upstream requests differ between samples`);
  } catch (error) {
    problems.push(`${label}: ${error instanceof Error ? error.message : String(error)}`);
  }

  const cpu = () => servingPids.reduce((sum, pid) => sum + cpuTimeMs(pid), 0);
  const before = await settle(stack.controls, scenario.sandboxLatencyMs);
  const cpuBefore = cpu();
  const sandboxCpuBefore = cpuTimeMs(stack.sandboxPid);
  const load = await runLoad(target, connections, { durationS: timing.durationS });
  const after = await settle(stack.controls, scenario.sandboxLatencyMs);
  const cpuAfter = cpu();
  const sandboxCpuAfter = cpuTimeMs(stack.sandboxPid);
  const mem = servingPids
    .map((pid) => memory(pid))
    .reduce((sum, m) => ({ rssMb: sum.rssMb + m.rssMb, peakRssMb: sum.peakRssMb + m.peakRssMb }));

  if (load.failures > 0) {
    problems.push(`${label}: ${load.failures} of ${load.responses} requests failed under load`);
  }
  // Requests in flight when the load stopped were still served (settle waited for them).
  const perRequest = (value: number) => (load.sent > 0 ? value / load.sent : NaN);
  return {
    scenario,
    side,
    load,
    cpuMsPerRequest: perRequest(cpuAfter - cpuBefore),
    sandboxCpuMsPerRequest: perRequest(sandboxCpuAfter - sandboxCpuBefore),
    memory: mem,
    sample: sampled,
    counted: {
      upstreamRequests: perRequest(after.requests - before.requests),
      credits: perRequest(after.records - before.records),
    },
    problems,
  };
}
