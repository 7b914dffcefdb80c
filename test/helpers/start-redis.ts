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
  /** Kills the server (SIGKILL): its connections drop, what it held is gone. */
  kill(): Promise<void>;
  /** Starts it again on the same port, empty (after {@link kill} or {@link stop}). */
  restart(): Promise<void>;
  /** Freezes it (SIGSTOP): connections stay open, nothing answers until {@link resume}. */
  pause(): void;
  /** Thaws it (SIGCONT): it answers what waited. */
  resume(): void;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * Starts Debian's `redis-server` (CI installs it as it installs chromium): `--save ''
 * --appendonly no`, so nothing touches the disk. `args` adds settings, e.g. `--maxmemory 2mb`.
 */
export async function startRedis(args: string[] = []): Promise<RedisServer> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0 });
  client.on('error', () => {});

  const spawnServer = async (): Promise<ChildProcess> => {
    const child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...args],
      { stdio: 'ignore' },
    );
    const spawned = new Promise<never>((_, reject) =>
      child.once('error', (error) =>
        reject(new Error(`redis-server could not start (apt-get install redis-server): ${error}`)),
      ),
    );
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
    await Promise.race([ready, spawned]);
    return child;
  };
  const end = async (child: ChildProcess, signal: NodeJS.Signals) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    // A frozen server takes no SIGTERM until thawed.
    child.kill('SIGCONT');
    child.kill(signal);
    await exited;
  };

  let child = await spawnServer();
  return {
    url,
    port,
    async flush() {
      await client.flushall();
    },
    async stop() {
      client.disconnect();
      await end(child, 'SIGTERM');
    },
    async kill() {
      await end(child, 'SIGKILL');
      client.disconnect();
    },
    async restart() {
      child = await spawnServer();
    },
    pause() {
      child.kill('SIGSTOP');
    },
    resume() {
      child.kill('SIGCONT');
    },
  };
}
