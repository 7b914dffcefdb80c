import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';

/** A Redis server for one suite, on a free loopback port, with nothing persisted. */
export interface RedisServer {
  url: string;
  port: number;
  /** Deletes every key. */
  flush(): Promise<void>;
  /** Stops the server (a gateway pointing at it then finds it down). */
  stop(): Promise<void>;
  /** Hangs the server (SIGSTOP): connections stay open, nothing is answered, commands queue. */
  pause(): void;
  /** Lets a paused server go on (SIGCONT): it runs what queued meanwhile, in order. */
  resume(): void;
  /** Kills the server at once (SIGKILL): connections reset, everything it held is lost. */
  kill(): Promise<void>;
  /** Starts a server again on the same port, empty (after `stop` or `kill`, or `absentRedis`). */
  restart(): Promise<void>;
  /** A client of the server, for a test to read what it holds (reconnects after a restart). */
  readonly client: Redis;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Spawns `redis-server` on `port` and waits until it answers PING. */
async function spawnRedis(port: number, args: string[]): Promise<ChildProcess> {
  const child: ChildProcess = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...args],
    { stdio: 'ignore' },
  );
  const spawned = new Promise<never>((_, reject) =>
    child.once('error', (error) =>
      reject(new Error(`redis-server could not start (apt-get install redis-server): ${error}`)),
    ),
  );
  const client = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0 });
  client.on('error', () => {});
  const ready = (async () => {
    for (let attempt = 0; attempt < 100; attempt++) {
      try {
        if (client.status !== 'ready') await client.connect();
        if ((await client.ping()) === 'PONG') return;
      } catch {
        await sleep(50);
      }
    }
    throw new Error(`redis-server did not answer on port ${port}`);
  })();
  try {
    await Promise.race([ready, spawned]);
  } finally {
    client.disconnect();
  }
  return child;
}

/** Waits for `child` to exit after `signal` (at once if it has exited already). */
async function ended(child: ChildProcess | undefined, signal: NodeJS.Signals): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  await exited;
}

/** A server of `port` that `restart` starts: `child` is the process now running, if any. */
function redisServer(port: number, args: string[], first: ChildProcess | undefined): RedisServer {
  const url = `redis://127.0.0.1:${port}`;
  let child = first;
  let paused = false;
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  client.on('error', () => {});
  return {
    url,
    port,
    client,
    async flush() {
      await client.flushall();
    },
    async stop() {
      client.disconnect();
      // A stopped process takes SIGTERM only once it runs again.
      if (paused) child?.kill('SIGCONT');
      await ended(child, 'SIGTERM');
    },
    pause() {
      paused = true;
      child?.kill('SIGSTOP');
    },
    resume() {
      paused = false;
      child?.kill('SIGCONT');
    },
    async kill() {
      await ended(child, 'SIGKILL');
    },
    async restart() {
      await ended(child, 'SIGKILL');
      child = await spawnRedis(port, args);
      if (client.status === 'end') await client.connect();
    },
  };
}

/**
 * Starts Debian's `redis-server` (CI installs it as it installs chromium): `--save ''
 * --appendonly no`, so nothing touches the disk. `args` adds settings, e.g. `--maxmemory 2mb`.
 */
export async function startRedis(args: string[] = []): Promise<RedisServer> {
  const port = await freePort();
  return redisServer(port, args, await spawnRedis(port, args));
}

/**
 * A free port where no Redis runs yet (a gateway started on it finds Redis absent at boot);
 * `restart` starts one there.
 */
export async function absentRedis(args: string[] = []): Promise<RedisServer> {
  return redisServer(await freePort(), args, undefined);
}
