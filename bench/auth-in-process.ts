// Issue 24's bound, measured without the noise of reading /proc: what `AUTH_MODE=jwt` with a
// `CREDIT_QUOTA` (memory) costs per request against `api-key` without one. Two gateways of the
// compiled build (`createGateway`, as main.ts composes them, logs to /dev/null and metrics on)
// live in this one process and take turns every 50 requests through `gateway.app.fetch`; each
// turn's CPU is read with `process.cpuUsage()` (microseconds, this process only). The upstream is
// a sandbox in a child process, reached by each gateway's own pipeline, so its CPU is not counted.
// What is left out, the HTTP server and the client, is the same on both sides: the ratio here is
// over a smaller denominator than over HTTP, so it overstates the difference, never hides it.
//
//   npm run build && npx tsx bench/auth-in-process.ts [requests=20000] [list|wide]
//
// `AA=1` gives both sides `api-key`: the instrument's own spread (an A/A). The last line printed is
// the result as JSON (`npm run bench` reads it).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { startJwtSide } from './jwt-side.js';
import { LIST_QUERY, WIDE_QUERY } from './scenarios.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST = `${ROOT}dist`;
const N = Number(process.argv[2] ?? 20_000);
const QUERY = process.argv[3] === 'wide' ? WIDE_QUERY : LIST_QUERY;
const BLOCK = 50;
const PORT = 40_000 + Math.floor(Math.random() * 20_000);

const { loadConfig } = await import(`${DIST}/config.js`);
const { createGateway } = await import(`${DIST}/create-gateway.js`);
const { createLogger } = await import(`${DIST}/logging/create-logger.js`);

const sandbox = spawn(process.execPath, [`${DIST}/sandbox/main.js`, '--port', String(PORT)], {
  stdio: 'ignore',
});
process.on('exit', () => sandbox.kill());
const upstreamUrl = `http://127.0.0.1:${PORT}`;
for (;;) {
  const up = await fetch(`${upstreamUrl}/v1/companies?limit=1`, {
    headers: { 'x-api-key': 'demo-key' },
  }).then(
    (response) => response.ok,
    () => false,
  );
  if (up) break;
  await sleep(100);
}

const jwt = await startJwtSide('demo-key');
const base = {
  NODE_ENV: 'production',
  UPSTREAM_URL: upstreamUrl,
  CURSOR_SECRET: 'bench-cursor-secret-0123456789',
  CACHE_TTL_SECONDS: '0',
};
const logger = () => createLogger('info', pino.destination({ dest: '/dev/null', sync: true }));
/** A gateway over `env` and the headers its requests send. */
const sideOf = async (env: Record<string, string>, headers: Record<string, string>) => ({
  gateway: await createGateway(loadConfig({ ...base, ...env }), { upstreamUrl, logger: logger() }),
  headers,
});
const apiKey = { 'x-api-key': 'demo-key' };
const sides = {
  apiKey: await sideOf({}, apiKey),
  jwt: process.env['AA'] ? await sideOf({}, apiKey) : await sideOf(jwt.env, jwt.headers),
};
const body = JSON.stringify({ query: QUERY });

/** CPU ms of `n` requests, one after another, through a side's fetch handler. */
async function run(side: (typeof sides)['jwt'], n: number): Promise<number> {
  const start = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const response = await side.gateway.app.fetch('http://gateway/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...side.headers },
      body,
    });
    const answer = (await response.json()) as { errors?: unknown };
    if (answer.errors) throw new Error(JSON.stringify(answer.errors));
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

for (const side of Object.values(sides)) await run(side, 1_500);
const total = { apiKey: 0, jwt: 0 };
const ratios: number[] = [];
for (let i = 0; i < N / BLOCK; i += 2) {
  const turn = { apiKey: 0, jwt: 0 };
  for (const name of i % 4 ? (['jwt', 'apiKey'] as const) : (['apiKey', 'jwt'] as const)) {
    turn[name] = await run(sides[name], BLOCK);
    total[name] += turn[name];
  }
  ratios.push(turn.jwt / turn.apiKey);
}
ratios.sort((a, b) => a - b);
const perRequest = (ms: number) => (ms / (N / 2)).toFixed(3);
console.log(
  `${process.argv[3] ?? 'list'}, ${N} requests in turns of ${BLOCK}: api-key ${perRequest(total.apiKey)} ms/req, ` +
    `jwt with a quota ${perRequest(total.jwt)} ms/req, ratio ${(total.jwt / total.apiKey).toFixed(3)}; ` +
    `median of the turns' ratios ${ratios[Math.floor(ratios.length / 2)]!.toFixed(3)}`,
);
console.log(
  JSON.stringify({
    apiKeyMs: total.apiKey / (N / 2),
    jwtMs: total.jwt / (N / 2),
    median: ratios[Math.floor(ratios.length / 2)],
  }),
);
jwt.close();
process.exit(0);
