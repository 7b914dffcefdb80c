/**
 * What Yoga's Fetch-API layer costs, measured as issue 39's thin adapter would remove it: the Yoga
 * floor (bench/yoga-floor-server.mjs) served by Yoga, against the same server with `ENVELOP=1`
 * (its envelop called from node:http). Both at once, interleaved blocks, CPU from /proc.
 *
 *   npm run build && npx tsx bench/experiments/envelop-floor.ts [blocks=20] [list|wide|walk]
 */
import { fileURLToPath } from 'node:url';
import {
  freePort,
  startSandbox,
  startService,
  stopService,
  waitForHttp,
  type Service,
} from '../processes.js';
import { interleaved, medianBlockRatio } from '../interleaved.js';
import { QUERIES } from '../scenarios.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BLOCKS = Number(process.argv[2] ?? 20);
const SCENARIO = process.argv[3] ?? 'list';
const query = QUERIES[SCENARIO as keyof typeof QUERIES];
if (!query) throw new RangeError(`scenario: one of ${Object.keys(QUERIES).join(', ')}`);
const body = JSON.stringify({ query });

const services: Service[] = [];
try {
  const sandbox = await startSandbox();
  services.push(sandbox);
  const floor = async (envelop: boolean) => {
    const port = await freePort();
    const service = startService({
      name: envelop ? 'envelop floor' : 'Yoga floor',
      script: 'bench/yoga-floor-server.mjs',
      env: { UPSTREAM_URL: sandbox.url, PORT: String(port), ...(envelop ? { ENVELOP: '1' } : {}) },
      port,
      cwd: ROOT,
    });
    services.push(service);
    await waitForHttp(service, `${service.url}/graphql?query=%7B__typename%7D`, 30_000);
    return service;
  };
  const [yoga, envelop] = [await floor(false), await floor(true)];
  const headers = { 'x-api-key': 'demo-key' };
  const side = (service: Service) => ({ url: service.url, pid: service.child.pid!, headers });
  const { yoga: a, envelop: b } = await interleaved(
    { yoga: side(yoga), envelop: side(envelop) },
    body,
    { blocks: BLOCKS, block: 200, concurrency: 8 },
  );
  console.log(
    `${SCENARIO}, ${BLOCKS} blocks of 200, c=8: Yoga floor ${a.cpuMs.toFixed(3)} ms/req, ` +
      `its envelop from node:http ${b.cpuMs.toFixed(3)} ms/req, ratio ${(b.cpuMs / a.cpuMs).toFixed(3)}, ` +
      `median of the block ratios ${medianBlockRatio(a, b).toFixed(3)}`,
  );
} finally {
  await Promise.all(services.map((service) => stopService(service)));
}
