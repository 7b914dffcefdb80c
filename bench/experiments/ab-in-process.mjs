/* global process, console, URL, fetch, setTimeout */
// In-process A/B of two builds of the gateway: CPU per request through `app.fetch`, the upstream
// replaced by a `JSON.parse` of a real sandbox page (the list and wide scenarios' queries). Both
// builds live in one process and alternate every 50 requests, so that the machine's drift (which
// on a shared 2-core VM moves the HTTP bench by 30% between runs) falls on both alike.
//
//   git worktree add /tmp/old <commit> && (cd /tmp/old && npm ci && npm run build)
//   npm run build && OLD=/tmp/old/dist NEW=$PWD/dist NODE_ENV=production node bench/experiments/ab-in-process.mjs 8000
//
// OPS=1 gives the new build what main.ts gives it: its JSON log at info (to /dev/null) and its
// metrics, process metrics included. REAL=1 replaces the stub by each build's own upstream
// pipeline (transport and policies, cache off) over loopback HTTP to a sandbox in a child process:
// the upstream exchange is then measured too, the sandbox's CPU is not.
if (!process.env.OLD) throw new Error('OLD=<dist of the build to compare against> is required');
const OLD = process.env.OLD,
  NEW = process.env.NEW ?? new URL('../../dist', import.meta.url).pathname;
const { startSandbox } = await import(`${NEW}/sandbox/index.js`);
const sandbox = await startSandbox({ port: 0, quiet: true });
const pages = {};
for (const [name, path] of [
  ['list', 'funding-events?limit=20'],
  ['wide', 'companies?limit=100'],
]) {
  pages[name] = await (
    await fetch(`${sandbox.url}/v1/${path}`, { headers: { 'x-api-key': sandbox.keys.demo } })
  ).text();
}
await sandbox.close();
const COMPANY = `uuid id name domain description linkedinHandle linkedinUrl linkedinGeoId linkedinIndustryId hqCity hqCountry { code name } industryGroup industrySubTags employeeCountBucket foundedYear businessModel createdAt updatedAt`;
const EVENT = `uuid id round amountUsdCents amountUsd amountOriginalCurrency amountOriginalCents announcedAt discoveredAt sources { url extractedAt } investors { id uuid name } company { ${COMPANY} }`;
const queries = {
  list: `{ fundingEvents(first: 20) { nodes { ${EVENT} } } }`,
  wide: `{ companies(first: 100) { nodes { ${COMPANY} } } }`,
};
async function opsOf(dir) {
  if (!process.env.OPS) return {};
  const { createLogger } = await import(`${dir}/logging/create-logger.js`);
  const { GatewayMetrics } = await import(`${dir}/metrics/gateway-metrics.js`);
  const { pino } = await import('pino');
  return {
    logger: createLogger('info', pino.destination({ dest: '/dev/null', sync: true })),
    metrics: new GatewayMetrics({ processMetrics: true }),
  };
}
let sandboxUrl;
if (process.env.REAL) {
  const { spawn } = await import('node:child_process');
  const port = 40000 + Math.floor(Math.random() * 20000);
  const child = spawn(
    process.execPath,
    [`${NEW}/sandbox/main.js`, '--port', String(port), '--quiet'],
    {
      stdio: 'ignore',
    },
  );
  process.on('exit', () => child.kill());
  sandboxUrl = `http://127.0.0.1:${port}`;
  for (;;) {
    const up = await fetch(`${sandboxUrl}/v1/companies?limit=1`, {
      headers: { 'x-api-key': 'demo-key' },
    }).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    await new Promise((r) => setTimeout(r, 100));
  }
}
async function appOf(dir, page, ops = {}) {
  const { createApp: create } = await import(`${dir}/app.js`);
  const { defaultConfig } = await import(`${dir}/config.js`);
  // Since issue 24 createApp is handed the authenticator (createGateway makes it from the config).
  const authFile = `${dir}/auth/create-authenticator.js`;
  const auth = (await import('node:fs')).existsSync(authFile)
    ? { authenticate: (await import(authFile)).createAuthenticator(defaultConfig) }
    : {};
  // Since issue 23 createApp returns { app, subgraph }; before, the app itself.
  const createApp = (config, deps) => {
    const created = create(config, { ...auth, ...deps });
    return 'app' in created ? created.app : created;
  };
  if (sandboxUrl) {
    const { createUpstream } = await import(`${dir}/upstream/create-upstream.js`);
    const upstream = createUpstream({ baseUrl: sandboxUrl, timeoutMs: 10_000 });
    return createApp(defaultConfig, { upstream, ...ops });
  }
  if ((await import('node:fs')).existsSync(`${dir}/upstream/operation-call.js`)) {
    // Since issue 22 the transport returns facts and the policies book them: only it is stubbed.
    const { createUpstream } = await import(`${dir}/upstream/create-upstream.js`);
    const upstream = createUpstream({ baseUrl: 'http://stub.invalid', timeoutMs: 10_000 });
    const transport = async () => ({ envelope: JSON.parse(page), bytes: page.length });
    const shared = { ...upstream.shared, transport };
    return createApp(defaultConfig, { upstream: { ...upstream, shared }, ...ops });
  }
  const stub = async ({ ledger }) => {
    ledger.sent();
    const body = JSON.parse(page);
    ledger.charged('saved' in ledger ? body : body.meta);
    return body;
  };
  let call = stub;
  if ((await import('node:fs')).existsSync(`${dir}/upstream/policies/budget.js`)) {
    const { budgetPolicy } = await import(`${dir}/upstream/policies/budget.js`);
    call = budgetPolicy(stub);
  }
  return createApp(defaultConfig, { upstream: { call, close: async () => {} }, ...ops });
}
const N = Number(process.argv[2] ?? 20000);
const BLOCK = 50;
for (const scenario of ['list', 'wide']) {
  const apps = {
    old: await appOf(OLD, pages[scenario]),
    new: await appOf(NEW, pages[scenario], await opsOf(NEW)),
  };
  const body = JSON.stringify({ query: queries[scenario] });
  const run = async (app, n) => {
    const start = process.cpuUsage();
    for (let i = 0; i < n; i++) {
      const r = await app.fetch('http://gw/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'demo-key' },
        body,
      });
      const j = await r.json();
      if (j.errors) throw new Error(JSON.stringify(j.errors));
    }
    const d = process.cpuUsage(start);
    return (d.user + d.system) / 1000;
  };
  for (const name of ['old', 'new']) await run(apps[name], 1000);
  const total = { old: 0, new: 0 };
  for (let i = 0; i < N / BLOCK; i++)
    for (const name of i % 2 ? ['new', 'old'] : ['old', 'new'])
      total[name] += await run(apps[name], BLOCK);
  const o = total.old / N,
    n = total.new / N;
  console.log(scenario, 'old', o.toFixed(3), 'new', n.toFixed(3), 'ratio', (n / o).toFixed(3));
}
process.exit(0);
