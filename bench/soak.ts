/**
 * Soak: the gateway under mixed load for a while, with faults injected into the sandbox, watching
 * for crashes, for responses that are neither data nor a coded error, and for memory that grows.
 *
 * Run: npm run soak -- [--seconds 180] [--connections 16] [--faults 0.2]
 *
 * The sandbox and the gateway (dist/main.js, page cache on) run as processes of their own on
 * loopback. Faults, as shares of /v1 requests: 40% of `--faults` are 500s, 20% dropped connections,
 * 20% malformed bodies, 20% 429s (Retry-After: 1 s). Half the operations send `Cache-Control:
 * no-cache`. Every 5 s the gateway's memory is read right after a full garbage collection (through
 * its inspector, {@link InspectorMemory}); the slopes of RSS and of the live heap (least squares,
 * MB per minute) are taken after the first 30 s, once the caches and the JIT have filled. Raw RSS
 * is a sawtooth of uncollected garbage, unfit for a slope of a few minutes.
 */
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';
import {
  freePort,
  memory,
  servingPid,
  startSandbox,
  startService,
  stopService,
  waitForHttp,
  type Service,
} from './processes.js';
import { LIST_QUERY, WALK_QUERY, WIDE_QUERY } from './scenarios.js';
import { UpstreamControls } from './upstream-controls.js';
import { InspectorMemory } from './inspector-memory.js';
import { startNodeFlags } from '../scripts/start-flags.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '180' },
    connections: { type: 'string', default: '16' },
    faults: { type: 'string', default: '0.2' },
  },
});
const SECONDS = Number(values.seconds);
const CONNECTIONS = Number(values.connections);
const FAULTS = Number(values.faults);

/** The codes a response may carry: anything else (or an error without a code) is a defect. */
const CODED = new Set([
  'UPSTREAM_UNAVAILABLE',
  'TOO_MANY_REQUESTS',
  'OPERATION_TIMEOUT',
  'CREDIT_BUDGET_EXHAUSTED',
]);

const MIX = [
  LIST_QUERY,
  WIDE_QUERY,
  WALK_QUERY,
  `{ company(domain: "ivoryco.in") { name fundingEvents(first: 5) { nodes { round } } } }`,
  `{ execMoves(first: 10, moveType: ["hire"]) { nodes { role person { name } company { name } } } }`,
];

async function main() {
  const services: Service[] = [];
  try {
    const sandbox = await startSandbox();
    services.push(sandbox);
    const gatewayPort = await freePort();
    const inspectorPort = await freePort();
    const gateway = startService({
      name: 'gateway',
      script: 'dist/main.js',
      nodeFlags: [...startNodeFlags(), `--inspect=127.0.0.1:${inspectorPort}`],
      env: {
        UPSTREAM_URL: sandbox.url,
        CURSOR_SECRET: 'bench-cursor-secret',
        PORT: String(gatewayPort),
        HOST: '127.0.0.1',
      },
      port: gatewayPort,
      cwd: ROOT,
    });
    services.push(gateway);
    await waitForHttp(gateway, `${gateway.url}/healthz`, 30_000);
    const pid = servingPid(gateway);
    const inspector = await InspectorMemory.connect(inspectorPort);
    const controls = new UpstreamControls(sandbox.url);
    const f = FAULTS;
    const faultQuery = `serverError=${0.4 * f}&drop=${0.2 * f}&malformed=${0.2 * f}&tooManyRequests=${0.2 * f}`;
    await fetch(`${sandbox.url}/__sandbox/faults?${faultQuery}`, { method: 'POST' });

    const agent = new Agent({ connections: CONNECTIONS, keepAliveTimeout: 30_000 });
    const outcomes = { data: 0, coded: 0, defects: 0 };
    const codes = new Map<string, number>();
    const defects: string[] = [];
    const started = Date.now();
    const endAt = started + SECONDS * 1000;
    const rss: [minutes: number, mb: number][] = [];
    const heap: [minutes: number, mb: number][] = [];

    const worker = async (id: number) => {
      for (let i = 0; Date.now() < endAt; i++) {
        const query = MIX[(id + i) % MIX.length]!;
        try {
          const response = await request(`${gateway.url}/graphql`, {
            method: 'POST',
            dispatcher: agent,
            headers: {
              'content-type': 'application/json',
              'x-api-key': 'demo-key',
              ...(i % 2 ? { 'cache-control': 'no-cache' } : {}),
            },
            body: JSON.stringify({ query }),
          });
          const body = (await response.body.json()) as {
            data?: unknown;
            errors?: { extensions?: { code?: string } }[];
          };
          if (!body.errors) {
            outcomes.data++;
            continue;
          }
          const found = body.errors.map((error) => error.extensions?.code ?? 'NO CODE');
          for (const code of found) codes.set(code, (codes.get(code) ?? 0) + 1);
          if (found.every((code) => CODED.has(code))) outcomes.coded++;
          else {
            outcomes.defects++;
            if (defects.length < 5) defects.push(JSON.stringify(body.errors).slice(0, 300));
          }
        } catch (error) {
          outcomes.defects++;
          if (defects.length < 5) defects.push(String(error));
        }
      }
    };
    const sampler = (async () => {
      while (Date.now() < endAt) {
        if (gateway.child.exitCode !== null) return;
        const minutes = (Date.now() - started) / 60_000;
        const settled = await inspector.settled();
        rss.push([minutes, settled.rssMb]);
        heap.push([minutes, settled.heapUsedMb]);
        await controls.reset().catch(() => {}); // keeps the sandbox's request log short
        await fetch(`${sandbox.url}/__sandbox/faults?${faultQuery}`, { method: 'POST' });
        await sleep(5_000);
      }
    })();
    await Promise.all([...Array.from({ length: CONNECTIONS }, (_, id) => worker(id)), sampler]);
    await agent.close();
    inspector.close();

    const crashed = gateway.child.exitCode !== null;
    const warm = ([minutes]: [number, number]) => minutes >= 0.5;
    const rssSlope = leastSquaresSlope(rss.filter(warm));
    const heapSlope = leastSquaresSlope(heap.filter(warm));
    const total = outcomes.data + outcomes.coded + outcomes.defects;
    console.log(`soak: ${SECONDS} s, ${CONNECTIONS} connections, ${f * 100}% faults injected`);
    console.log(
      `responses: ${total} (${(total / SECONDS).toFixed(0)}/s): ${outcomes.data} data, ` +
        `${outcomes.coded} coded errors, ${outcomes.defects} neither`,
    );
    console.log(
      `codes: ${[...codes].map(([code, count]) => `${code} ${count}`).join(', ') || 'none'}`,
    );
    const samples = (points: [number, number][]) =>
      points.map(([m, mb]) => `${m.toFixed(1)}:${mb.toFixed(0)}`).join(' ');
    console.log(
      `gateway after a full GC: RSS ${rss[0]?.[1].toFixed(1)} MB at start, ${rss.at(-1)?.[1].toFixed(1)} MB at the end, ` +
        `slope after 30 s ${rssSlope.toFixed(2)} MB/min; live heap ${heap[0]?.[1].toFixed(1)} → ` +
        `${heap.at(-1)?.[1].toFixed(1)} MB, slope ${heapSlope.toFixed(2)} MB/min (${rss.filter(warm).length} samples)`,
    );
    console.log(`peak RSS: ${memory(pid).peakRssMb.toFixed(0)} MB`);
    console.log(`RSS samples (min: MB): ${samples(rss)}`);
    console.log(`heap samples (min: MB): ${samples(heap)}`);
    console.log(`crashed: ${crashed ? 'YES' : 'no'}`);
    for (const defect of defects) console.log(`  ! ${defect}`);
    process.exitCode = crashed || outcomes.defects > 0 ? 1 : 0;
  } finally {
    await Promise.all(services.map((service) => stopService(service)));
  }
}

function leastSquaresSlope(points: [number, number][]): number {
  const n = points.length;
  if (n < 2) return NaN;
  const meanX = points.reduce((sum, [x]) => sum + x, 0) / n;
  const meanY = points.reduce((sum, [, y]) => sum + y, 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - meanX) * (y - meanY);
    den += (x - meanX) ** 2;
  }
  return num / den;
}

await main();
