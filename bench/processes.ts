import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

/** Bytes of each child's output kept for error messages (the tail). */
const OUTPUT_TAIL = 16_384;

/** A child process of the harness: a server started with `node <script>`. */
export interface Service {
  /** Short name for messages, e.g. `sandbox`. */
  readonly name: string;
  readonly child: ChildProcess;
  /** Base address, e.g. `http://127.0.0.1:41234`. */
  readonly url: string;
  readonly port: number;
  /** The last {@link OUTPUT_TAIL} bytes of stdout and stderr, interleaved. */
  output(): string;
  /** Resolves with the exit code (or signal) once the process has exited. */
  readonly exited: Promise<number | NodeJS.Signals | null>;
}

/** How to start a {@link Service}. */
export interface ServiceOptions {
  name: string;
  /** The entry point, relative to `cwd`: compiled JavaScript, or TypeScript run through tsx. */
  script: string;
  args?: string[];
  env?: Record<string, string>;
  /** Node flags placed before the script (e.g. `--cpu-prof`). */
  nodeFlags?: string[];
  port: number;
  cwd: string;
}

/** A free TCP port on loopback, found by binding port 0 and closing again. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error('no free port'))));
    });
  });
}

/**
 * Spawns `node [nodeFlags] <script> [args]` with the harness's own Node binary; a `.ts` script
 * runs through tsx.
 */
export function startService(options: ServiceOptions): Service {
  const loader = options.script.endsWith('.ts') ? ['--import', 'tsx'] : [];
  const child = spawn(
    process.execPath,
    [...(options.nodeFlags ?? []), ...loader, options.script, ...(options.args ?? [])],
    {
      cwd: options.cwd,
      env: { NODE_ENV: 'production', ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let tail = '';
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-OUTPUT_TAIL);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    child.once('exit', (code, signal) => resolve(code ?? signal));
    child.once('error', (error) => {
      keep(Buffer.from(`\nspawn error: ${error.message}\n`));
      resolve(null);
    });
  });
  return {
    name: options.name,
    child,
    port: options.port,
    url: `http://127.0.0.1:${options.port}`,
    output: () => tail,
    exited,
  };
}

/**
 * Polls `url` until it answers 200, the service exits, or `timeoutMs` passes.
 *
 * @throws Error naming the service, with the tail of its output.
 */
export async function waitForHttp(
  service: Service,
  url: string,
  timeoutMs: number,
  headers: Record<string, string> = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void service.exited.then(() => (exited = true));
  let last = '';
  while (Date.now() < deadline) {
    if (exited) break;
    try {
      const response = await fetch(url, { headers, signal: AbortSignal.timeout(1_000) });
      await response.arrayBuffer();
      if (response.status === 200) return;
      last = `HTTP ${response.status}`;
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const why = exited ? 'exited before it was ready' : `not ready after ${timeoutMs} ms (${last})`;
  throw new Error(`${service.name} ${why}; its output:\n${service.output() || '(none)'}`);
}

/** Sends SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
export async function stopService(service: Service, graceMs = 3_000): Promise<void> {
  const { child } = service;
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await service.exited;
  clearTimeout(timer);
}

/** `pid` and every process descended from it. */
export function processTree(pid: number): number[] {
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) tree.push(...childrenOf(tree[i]!));
  return tree;
}

function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) === pid) children.push(Number(entry));
    } catch {
      // the process went away while we looked
    }
  }
  return children;
}

function listeningInodes(port: number): Set<string> {
  const inodes = new Set<string>();
  const portHex = port.toString(16).toUpperCase().padStart(4, '0');
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const columns = line.trim().split(/\s+/);
      const local = columns[1];
      // column 3 is the socket state; 0A is LISTEN. Column 9 is the inode.
      if (local?.endsWith(`:${portHex}`) && columns[3] === '0A' && columns[9]) {
        inodes.add(columns[9]);
      }
    }
  }
  return inodes;
}

/**
 * The pid that holds the listening socket of `port`: the service's own process or one of its
 * descendants (a loader such as tsx could fork). Found through /proc/net/tcp and /proc/<pid>/fd.
 *
 * @throws Error when no process in the service's tree holds the socket.
 */
export function servingPid(service: Service): number {
  const root = service.child.pid;
  if (root === undefined) throw new Error(`${service.name} has no pid`);
  const sockets = new Set([...listeningInodes(service.port)].map((inode) => `socket:[${inode}]`));
  const queue = [root];
  const seen = new Set<number>();
  while (queue.length > 0) {
    const pid = queue.shift() as number;
    if (seen.has(pid)) continue;
    seen.add(pid);
    try {
      for (const fd of readdirSync(`/proc/${pid}/fd`)) {
        try {
          if (sockets.has(readlinkSync(`/proc/${pid}/fd/${fd}`))) return pid;
        } catch {
          // fd closed while we looked
        }
      }
    } catch {
      continue;
    }
    queue.push(...childrenOf(pid));
  }
  throw new Error(
    `no process in ${service.name}'s tree (pid ${root}) listens on port ${service.port}`,
  );
}

let ticksPerSecond: number | undefined;

/** Clock ticks per second of /proc/<pid>/stat times (`getconf CLK_TCK`, normally 100). */
export function clockTicksPerSecond(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    } catch {
      ticksPerSecond = 100;
    }
    if (!Number.isFinite(ticksPerSecond) || ticksPerSecond <= 0) ticksPerSecond = 100;
  }
  return ticksPerSecond;
}

/** User plus system CPU time of a process (all its threads), in milliseconds. */
export function cpuTimeMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after "pid (comm) ": index 0 is field 3 (state); utime is field 14, stime field 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / clockTicksPerSecond();
}

/** Resident memory of a process: now (`VmRSS`) and its peak since start (`VmHWM`), in MiB. */
export interface Memory {
  rssMb: number;
  peakRssMb: number;
}

/** Reads {@link Memory} from /proc/<pid>/status. */
export function memory(pid: number): Memory {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => {
    const match = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status);
    return match?.[1] ? Number(match[1]) : NaN;
  };
  return { rssMb: kb('VmRSS') / 1024, peakRssMb: kb('VmHWM') / 1024 };
}

/** The repository's root, where `dist/` is built. */
const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * The sandbox from the build (`dist/sandbox/main.js`) as a process of its own on a free loopback
 * port, with its controls (`/__sandbox/…`), once it answers.
 */
export async function startSandbox(timeoutMs = 30_000): Promise<Service> {
  const port = await freePort();
  const sandbox = startService({
    name: 'sandbox',
    script: 'dist/sandbox/main.js',
    args: ['--port', String(port), '--host', '127.0.0.1', '--controls', '--quiet'],
    port,
    cwd: ROOT,
  });
  await waitForHttp(sandbox, `${sandbox.url}/__sandbox/counters`, timeoutMs);
  return sandbox;
}
