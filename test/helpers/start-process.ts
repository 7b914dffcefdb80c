import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { settings } from '../../src/config.js';
import { startNodeFlags } from '../../scripts/start-flags.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A free TCP port on loopback (bound, then released). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The gateway as `npm run dev` runs it, in a process of its own. */
export interface GatewayProcess {
  child: ChildProcess;
  /** Resolves with the exit code and signal once it has exited. */
  exited: Promise<[number | null, NodeJS.Signals | null]>;
  /** e.g. `http://127.0.0.1:41234`. */
  origin: string;
  /** Its `/graphql` address. */
  url: string;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
}

const started = new Set<ChildProcess>();

/**
 * Kills every process {@link startGatewayProcess} started that is still running, and its workers
 * with it (a primary's workers exit when it goes). For `afterAll`: a test that timed out never
 * reached its own clean-up.
 */
export function killGatewayProcesses(): void {
  for (const child of started) if (child.exitCode === null) child.kill('SIGKILL');
  started.clear();
}

/** This process's environment without any of the gateway's settings: only `env` sets them. */
function environmentWithoutSettings(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const { env: variable } of Object.values(settings)) delete env[variable];
  return env;
}

/**
 * Starts the gateway on a free loopback port with only `env` set of its settings: `npm run dev`'s
 * `node --import tsx src/main.ts`, or with `dist`, `npm start`'s `node <its flags> dist/main.js` (the
 * test run builds it first). Resolves once `/healthz` answers.
 */
export async function startGatewayProcess(
  env: Record<string, string>,
  { dist = false } = {},
): Promise<GatewayProcess> {
  const port = await freePort();
  const args = dist ? [...startNodeFlags(), 'dist/main.js'] : ['--import', 'tsx', 'src/main.ts'];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: {
      ...environmentWithoutSettings(),
      PORT: String(port),
      HOST: '127.0.0.1',
      // Each process its own alerts file (the default `data/` would be every test's at once).
      ALERTS_DATA_DIR: mkdtempSync(join(tmpdir(), 'gateway-alerts-')),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.add(child);
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk));
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  const origin = `http://127.0.0.1:${port}`;
  for (let waited = 0; ; waited += 100) {
    if (waited > 30_000 || child.exitCode !== null) throw new Error(`no start:\n${output}`);
    const up = await fetch(`${origin}/healthz`).then(
      (response) => response.ok,
      () => false,
    );
    if (up) break;
    await sleep(100);
  }
  return { child, exited, origin, url: `${origin}/graphql`, output: () => output };
}
