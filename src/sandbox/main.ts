import { parseArgs } from 'node:util';
import { DEFAULT_SIZES } from './dataset/generate-dataset.js';
import { startSandbox, type SandboxOptions } from './start-sandbox.js';

const HELP = `Business-Signals sandbox: a local emulator of the /v1 REST service.

Usage: npm run sandbox -- [options]

  --port <n>            TCP port (default 4500; 0 picks a free one)
  --host <addr>         interface to bind (default 127.0.0.1)
  --seed <n>            data seed (default 42)
  --companies <n>       companies      (default ${DEFAULT_SIZES.companies})
  --investors <n>       investors      (default ${DEFAULT_SIZES.investors})
  --persons <n>         persons        (default ${DEFAULT_SIZES.persons})
  --funding-events <n>  funding events (default ${DEFAULT_SIZES.fundingEvents})
  --acquisitions <n>    acquisitions   (default ${DEFAULT_SIZES.acquisitions})
  --exec-moves <n>      exec moves     (default ${DEFAULT_SIZES.execMoves})
  --latency-ms <n>      fixed delay added to every /v1 answer (default 0)
  --jitter-ms <n>       random extra delay, uniform in [0, n) (default 0)
  --trickle-seconds <s> add one event of a random kind every s seconds, discovered
                        now (decimals allowed; default 0: none)
  --controls            expose the test controls under /__sandbox/
  --quiet               no access log
  --help                show this help
`;

function integer(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value)) {
    throw new RangeError(`--${name} must be a non-negative integer (got "${raw}")`);
  }
  return value;
}

function seconds(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!/^\d+(\.\d+)?$/.test(raw) || !Number.isFinite(value)) {
    throw new RangeError(`--${name} must be a number of seconds >= 0 (got "${raw}")`);
  }
  return value;
}

function parseOptions(argv: string[]): SandboxOptions | null {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      seed: { type: 'string' },
      companies: { type: 'string' },
      investors: { type: 'string' },
      persons: { type: 'string' },
      'funding-events': { type: 'string' },
      acquisitions: { type: 'string' },
      'exec-moves': { type: 'string' },
      'latency-ms': { type: 'string' },
      'jitter-ms': { type: 'string' },
      'trickle-seconds': { type: 'string' },
      controls: { type: 'boolean' },
      quiet: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return null;
  const sizes = Object.fromEntries(
    (
      [
        ['companies', 'companies'],
        ['investors', 'investors'],
        ['persons', 'persons'],
        ['fundingEvents', 'funding-events'],
        ['acquisitions', 'acquisitions'],
        ['execMoves', 'exec-moves'],
      ] as const
    )
      .map(([key, flag]) => [key, integer(flag, values[flag])] as const)
      .filter(([, value]) => value !== undefined),
  );
  const trickleSeconds = seconds('trickle-seconds', values['trickle-seconds']) ?? 0;
  if (trickleSeconds > 0 && trickleSeconds < 0.001)
    throw new RangeError(`--trickle-seconds must be 0 or at least 0.001 (got "${trickleSeconds}")`);
  return {
    port: integer('port', values.port) ?? 4500,
    host: values.host ?? '127.0.0.1',
    seed: integer('seed', values.seed) ?? 42,
    sizes,
    latency: {
      fixedMs: integer('latency-ms', values['latency-ms']),
      jitterMs: integer('jitter-ms', values['jitter-ms']),
    },
    controlsOverHttp: values.controls ?? false,
    quiet: values.quiet ?? false,
    trickle: trickleSeconds > 0 ? { everyMs: trickleSeconds * 1000 } : undefined,
  };
}

async function main(): Promise<void> {
  let options: SandboxOptions | null;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    console.error(`sandbox: ${error instanceof Error ? error.message : String(error)}\n\n${HELP}`);
    process.exitCode = 2;
    return;
  }
  if (options === null) {
    console.log(HELP);
    return;
  }
  const started = performance.now();
  const sandbox = await startSandbox(options);
  const ms = performance.now() - started;
  const d = sandbox.data;
  console.log(
    `Business-Signals sandbox listening on ${sandbox.url} (started in ${ms.toFixed(0)} ms, seed ${d.seed})`,
  );
  console.log(
    `  data: ${d.companies.length} companies, ${d.investors.length} investors, ${d.persons.length} persons, ` +
      `${d.fundingEvents.length} funding events, ${d.acquisitions.length} acquisitions, ${d.execMoves.length} exec moves`,
  );
  console.log('  keys (send as X-API-Key):');
  console.log(`    ${sandbox.keys.demo.padEnd(18)} 10^12 credits, no rate limit`);
  console.log(`    ${sandbox.keys.lowCredit.padEnd(18)} 5 credits`);
  console.log(`    ${sandbox.keys.noCredit.padEnd(18)} 0 credits (PAYMENT_REQUIRED)`);
  console.log(
    `    ${sandbox.keys.rateLimited.padEnd(18)} 2 requests per second (TOO_MANY_REQUESTS)`,
  );
  console.log(`    ${sandbox.keys.blocked.padEnd(18)} blocked (FORBIDDEN)`);
  if (options.controlsOverHttp)
    console.log(`  controls: ${sandbox.url}/__sandbox/{log,counters,reset,latency,faults,events}`);
  if (options.trickle)
    console.log(`  trickle: one new event every ${options.trickle.everyMs / 1000} s`);
  console.log(
    `  try: curl -H 'X-API-Key: demo-key' '${sandbox.url}/v1/funding-events?limit=2&round=series_a'`,
  );

  const shutdown = (signal: string): void => {
    console.log(`sandbox: ${signal}, shutting down`);
    sandbox.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', () => shutdown('SIGINT'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));
}

await main();
