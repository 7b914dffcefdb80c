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
  /** Freezes the server (SIGSTOP): connections stay open, and no command is answered. */
  pause(): void;
  /** Lets a paused server go on (SIGCONT): it answers what was sent meanwhile. */
  resume(): void;
  /** Stops the server and starts another on the same port: the same address, nothing kept. */
  restart(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Starts `redis-server` on `port` and resolves once it answers a PING. */
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
  const client = new Redis(`redis://127.0.0.1:${port}`, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
  });
  client.on('error', () => {});
  const ready = (async () => {
    try {
      for (let attempt = 0; attempt < 100; attempt++) {
        try {
          if (client.status !== 'ready') await client.connect();
          if ((await client.ping()) === 'PONG') return;
        } catch {
          await sleep(50);
        }
      }
      throw new Error(`redis-server did not answer on port ${port}`);
    } finally {
      client.disconnect();
    }
  })();
  await Promise.race([ready, spawned]);
  return child;
}

/** Stops `child` (SIGCONT first, in case it is paused) and waits for it to exit. */
async function stopRedis(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGCONT');
  child.kill('SIGTERM');
  await exited;
}

/**
 * Starts Debian's `redis-server` (CI installs it as it installs chromium): `--save ''
 * --appendonly no`, so nothing touches the disk. `args` adds settings, e.g. `--maxmemory 2mb`.
 */
export async function startRedis(args: string[] = []): Promise<RedisServer> {
  const port = await freePort();
  let child = await spawnRedis(port, args);
  const url = `redis://127.0.0.1:${port}`;
  const client = new Redis(url, { maxRetriesPerRequest: 0 });
  client.on('error', () => {});
  return {
    url,
    port,
    async flush() {
      await client.flushall();
    },
    async stop() {
      client.disconnect();
      await stopRedis(child);
    },
    pause() {
      child.kill('SIGSTOP');
    },
    resume() {
      child.kill('SIGCONT');
    },
    async restart() {
      await stopRedis(child);
      child = await spawnRedis(port, args);
    },
  };
}
