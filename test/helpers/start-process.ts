import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

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

/**
 * Starts `node --import tsx src/main.ts` on a free loopback port with `env` over this process's
 * environment (set `UPSTREAM_URL`), and resolves once `/healthz` answers.
 */
export async function startGatewayProcess(env: Record<string, string>): Promise<GatewayProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', ...env },
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
