/**
 * What the gateway holds at rest above the Yoga floor (issue 39's second memory target), split the
 * way the kernel and V8 see it. The sandbox, the gateway (this build's dist/main.js, as `npm run
 * bench` starts it for its idle reading; another build's with `dist`) and the Yoga floor (bench/yoga-floor-server.mjs) run at
 * once, each with `--inspect`; each answers one list query, then all are left alone `wait` ms.
 * Then, per process: RSS split into anonymous and file-backed pages (the node binary's own pages
 * touched, e.g. ICU's data, count there), the mappings that hold most, V8's heap spaces (size and
 * used), and RSS and heap used again after a full collection asked through the inspector: what a
 * memory reducer that had run would leave.
 *
 *   npm run build && npx tsx bench/experiments/idle-memory.ts [wait=25000] [dist=dist]
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  freePort,
  servingPid,
  startSandbox,
  startService,
  stopService,
  waitForHttp,
  type Service,
} from '../processes.js';
import { InspectorMemory } from '../inspector-memory.js';
import { LIST_QUERY } from '../scenarios.js';
import { startNodeFlags } from '../../scripts/start-flags.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const WAIT_MS = Number(process.argv[2] ?? 25_000);
const DIST = process.argv[3] ?? 'dist';
const MB = 2 ** 20;

/** Resident kB by mapping (file name, or `[anon]`), from /proc/<pid>/smaps. */
function residentByMapping(pid: number): Map<string, number> {
  const byMapping = new Map<string, number>();
  let mapping = '';
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const header = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header) {
      mapping = header[1]!.split('/').pop() || '[anon]';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) byMapping.set(mapping, (byMapping.get(mapping) ?? 0) + Number(rss[1]));
  }
  return byMapping;
}

const HEAP = `process.getBuiltinModule('v8').getHeapSpaceStatistics().filter((s) => s.space_size > 0)
  .map((s) => [s.space_name, s.space_size, s.space_used_size])`;

const services: Service[] = [];
try {
  const sandbox = await startSandbox();
  services.push(sandbox);
  const start = async (name: string, script: string, env: Record<string, string>) => {
    const [port, inspector] = [await freePort(), await freePort()];
    const service = startService({
      name,
      script,
      env: { UPSTREAM_URL: sandbox.url, PORT: String(port), HOST: '127.0.0.1', ...env },
      nodeFlags: [...startNodeFlags(), `--inspect=127.0.0.1:${inspector}`],
      port,
      cwd: ROOT,
    });
    services.push(service);
    await waitForHttp(service, `${service.url}/graphql?query=%7B__typename%7D`, 30_000);
    return { service, inspector };
  };
  const sides = [
    await start('gateway', `${DIST}/main.js`, {
      CACHE_TTL_SECONDS: '60',
      CURSOR_SECRET: 'bench-cursor-secret',
    }),
    await start('Yoga floor', 'bench/yoga-floor-server.mjs', {}),
  ];
  for (const { service } of sides) {
    const response = await fetch(`${service.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'demo-key' },
      body: JSON.stringify({ query: LIST_QUERY }),
    });
    await response.text();
  }
  await new Promise((resolve) => setTimeout(resolve, WAIT_MS));
  for (const { service, inspector } of sides) {
    const pid = servingPid(service);
    const mappings = residentByMapping(pid);
    const rss = [...mappings.values()].reduce((sum, kb) => sum + kb, 0) / 1024;
    const anon = ((mappings.get('[anon]') ?? 0) + (mappings.get('[heap]') ?? 0)) / 1024;
    const inspected = await InspectorMemory.connect(inspector);
    const spaces = (await inspected.evaluate(HEAP)) as [string, number, number][];
    const after = await inspected.settled();
    inspected.close();
    const top = [...mappings]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 5)
      .map(([name, kb]) => `${name} ${(kb / 1024).toFixed(1)}`);
    console.log(
      `${service.name} after one query and ${WAIT_MS / 1000} s: RSS ${rss.toFixed(1)} MB ` +
        `(anonymous ${anon.toFixed(1)}, file-backed ${(rss - anon).toFixed(1)}); most: ${top.join(', ')}\n` +
        `  V8 spaces, MB size/used: ${spaces.map(([name, size, used]) => `${name} ${(size / MB).toFixed(1)}/${(used / MB).toFixed(1)}`).join(', ')}\n` +
        `  after a full collection: RSS ${after.rssMb.toFixed(1)} MB, heap used ${after.heapUsedMb.toFixed(1)} MB`,
    );
  }
} finally {
  await Promise.all(services.map((service) => stopService(service)));
}
