import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
/**
 * Interleaved A/B of two builds over HTTP: one sandbox and two gateways (`OLD` and `NEW` dist
 * directories, page cache off) run as processes at once; blocks of requests go to one, then the
 * other, in alternating order, and each gateway's CPU time (/proc) is read around its blocks. The
 * machine's drift then falls on both alike, which separate runs of `npm run bench` cannot give.
 *
 *   npm run build && OLD=<dist of the other build> npx tsx bench/ab-http.ts [blocks=40] [scenario=list]
 *
 * OLD_FLAGS and NEW_FLAGS (space-separated) are Node flags for either gateway, e.g. one build
 * against itself with `NEW_FLAGS=--max-semi-space-size=32`. `NEW_AUTH=jwt` runs the new side with
 * `AUTH_MODE=jwt` and a `CREDIT_QUOTA` (in memory), a JWKS served here and one bearer token: one
 * build against itself then measures what token verification and the quota cost per request;
 * `NEW_REDIS_URL` puts the new side's quotas (and page cache) in that Redis. Each side's mean wall
 * time per request is printed too.
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

/** With `NEW_AUTH=jwt`: the new side's settings and the bearer token its load sends. */
async function jwtSide(): Promise<{ env: Record<string, string>; token: string; close(): void }> {
  const { exportJWK, generateKeyPair, SignJWT } = await import('jose');
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const jwks = JSON.stringify({
    keys: [{ ...(await exportJWK(publicKey)), kid: 'bench', alg: 'ES256', use: 'sig' }],
  });
  const server = createServer((_request, response) =>
    response.writeHead(200, { 'content-type': 'application/json' }).end(jwks),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = 'https://idp.bench/';
  const token = await new SignJWT({})
    .setProtectedHeader({ alg: 'ES256', kid: 'bench' })
    .setSubject('bench-user')
    .setIssuer(issuer)
    .setAudience('business-signals-gateway')
    .setExpirationTime('2h')
    .sign(privateKey);
  return {
    env: {
      AUTH_MODE: 'jwt',
      JWT_JWKS_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`,
      JWT_ISSUER: issuer,
      JWT_AUDIENCE: 'business-signals-gateway',
      UPSTREAM_API_KEY: 'demo-key',
      CREDIT_QUOTA: '1000000000/day',
    },
    token,
    close: () => server.close(),
  };
}
const auth = process.env['NEW_AUTH'] === 'jwt' ? await jwtSide() : null;
/** The credential each side's load sends. */
const credential: Record<'old' | 'new', Record<string, string>> = {
  old: { 'x-api-key': 'demo-key' },
  new: auth ? { authorization: `Bearer ${auth.token}` } : { 'x-api-key': 'demo-key' },
};

async function gateway(name: 'old' | 'new', dist: string, upstream: string): Promise<Service> {
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
      ...(name === 'new' ? auth?.env : {}),
      ...(name === 'new' && process.env['NEW_REDIS_URL']
        ? { REDIS_URL: process.env['NEW_REDIS_URL'] }
        : {}),
    },
    port,
    cwd: ROOT,
  });
  await waitForHttp(service, `${service.url}/healthz`, 30_000);
  return service;
}

async function load(url: string, count: number, headers: Record<string, string>): Promise<void> {
  let sent = 0;
  const worker = async () => {
    while (sent < count) {
      sent++;
      const response = await request(`${url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
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
  for (const name of ['old', 'new'] as const) await load(sides[name].url, 1_500, credential[name]);
  const cpu = { old: 0, new: 0, sandbox: 0 };
  const wall = { old: 0, new: 0 };
  const sandboxPid = sandbox.child.pid!;
  for (let i = 0; i < BLOCKS; i++) {
    for (const name of i % 2 ? (['new', 'old'] as const) : (['old', 'new'] as const)) {
      const pid = sides[name].child.pid!;
      const before = cpuTimeMs(pid);
      const sandboxBefore = cpuTimeMs(sandboxPid);
      const started = performance.now();
      await load(sides[name].url, BLOCK, credential[name]);
      wall[name] += performance.now() - started;
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
  // A block's wall time over its requests, times the requests in flight: the mean latency.
  const latency = (ms: number) => ((ms * CONCURRENCY) / (BLOCKS * BLOCK)).toFixed(3);
  console.log(`mean latency: old ${latency(wall.old)} ms, new ${latency(wall.new)} ms`);
} finally {
  auth?.close();
  await Promise.all(services.map((service) => stopService(service)));
}
