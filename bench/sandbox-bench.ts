/**
 * Sandbox benchmark: startup time on the default data, then median and p99
 * time per page request, both as server time (the handler, from the request
 * log) and as loopback round trip over a keep-alive connection.
 *
 * Server time runs from the request event to the response body being built
 * (it excludes socket writes and added latency).
 *
 * Run: npx tsx bench/sandbox-bench.ts [--requests 2000]
 */
import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';
import { generateDataset, startSandbox } from '../src/sandbox/index.js';

const { values } = parseArgs({ options: { requests: { type: 'string', default: '2000' } } });
const REQUESTS = Number(values.requests);

const QUERIES = [
  '/v1/funding-events?limit=20&round=series_a',
  '/v1/funding-events?limit=20&country=DE',
  '/v1/exec-moves?limit=20&roleSeniority=c_level',
  '/v1/acquisitions?limit=20&minAmountUsd=21500000',
  '/v1/companies?limit=20&industryGroup=Fintech',
  '/v1/companies?limit=20&search=payments',
  '/v1/investors?limit=20&type=vc',
  '/v1/funding-events?limit=100&round=seed',
];

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN;
}

/** Spawns the CLI and resolves with the milliseconds until it prints its URL. */
function cliStartup(): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'src/sandbox/main.ts', '--port', '0', '--quiet'],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    child.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('listening on')) {
        const ms = performance.now() - started;
        child.kill('SIGTERM');
        resolve(ms);
      }
    });
    child.on('error', reject);
  });
}

const startStart = performance.now();
const sandbox = await startSandbox({ port: 0, quiet: true });
const startupMs = performance.now() - startStart;
const genStart = performance.now();
generateDataset(42);
const genMs = performance.now() - genStart;
const cliMs = await cliStartup();
console.log(
  `startup, in-process startSandbox() with default data (cold): ${startupMs.toFixed(0)} ms`,
);
console.log(`  generation alone, warm: ${genMs.toFixed(0)} ms`);
console.log(`startup, CLI (process spawn until the URL is printed): ${cliMs.toFixed(0)} ms`);
console.log(`requests per query: ${REQUESTS} sequential over keep-alive, after 200 warm-up\n`);
console.log('query'.padEnd(52), 'server p50  server p99  loopback p50  loopback p99');

const headers = { 'X-API-Key': sandbox.keys.demo };
for (const query of QUERIES) {
  const url = `${sandbox.url}${query}`;
  for (let i = 0; i < 200; i++) await (await fetch(url, { headers })).arrayBuffer();
  sandbox.reset();
  const roundTrips: number[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < REQUESTS; i++) {
    const pageUrl: string =
      i % 2 === 1 && cursor ? `${url}&cursor=${encodeURIComponent(cursor)}` : url;
    const t0 = performance.now();
    const res = await fetch(pageUrl, { headers });
    const body = (await res.json()) as { pagination: { nextCursor: string | null } };
    roundTrips.push(performance.now() - t0);
    cursor = body.pagination.nextCursor;
  }
  const server = sandbox
    .requestLog()
    .map((e) => e.serverMs)
    .sort((a, b) => a - b);
  roundTrips.sort((a, b) => a - b);
  const fmt = (ms: number): string => `${ms.toFixed(3)} ms`.padStart(10);
  console.log(
    query.padEnd(52),
    fmt(percentile(server, 0.5)),
    fmt(percentile(server, 0.99)),
    ' ',
    fmt(percentile(roundTrips, 0.5)),
    ' ',
    fmt(percentile(roundTrips, 0.99)),
  );
}
await sandbox.close();
