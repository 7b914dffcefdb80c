import type { Redis } from 'ioredis';
import { failFastRedis } from './shared-redis.js';

/** Whether the gateway asks Redis now. */
export type RedisState = 'up' | 'down';

/** Thrown at once, without asking Redis, while the link is down. */
export class RedisDown extends Error {
  override readonly name = 'RedisDown';
  constructor() {
    super('Redis is not asked now: it timed out or was unreachable, and has not answered since');
  }
}

/** Options of {@link RedisLink}. */
export interface RedisLinkOptions {
  /** `redis://…` (`REDIS_URL`). */
  url: string;
  /** How often, while down, one PING asks whether Redis answers again. */
  probeMs?: number;
  /** Told once per change of state, with the failure that took it down. */
  onChange?: (state: RedisState, reason?: string) => void;
}

/** How often a link that is down asks Redis again (one PING). */
const PROBE_MS = 1_000;

/** The failures of a command that say Redis does not answer (not a command of ours gone wrong). */
function isUnreachable(error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error);
  return /timed out|ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|Connection is closed|Stream isn't writeable|enableOfflineQueue|LOADING/i.test(
    message,
  );
}

/**
 * The one connection of this process to the shared Redis, for the page cache, the kept answers,
 * the quotas and the pollers alike, with a breaker: a command that times out or finds Redis
 * unreachable takes the link down, and while it is down nothing asks Redis (each caller serves
 * from its local state at once) but one PING every {@link PROBE_MS}; the first that answers brings
 * it up. So a hung or unreachable Redis costs a request at most one command timeout, and the
 * gateway returns to Redis by itself. Each change is told to `onChange` (the log line, the metric,
 * `/readyz`'s body).
 */
export class RedisLink {
  readonly client: Redis;
  /** The URL, for the connections of its own that pub/sub and blocking reads need. */
  readonly url: string;
  readonly #options: RedisLinkOptions;
  #state: RedisState = 'up';
  #probe: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: RedisLinkOptions) {
    this.#options = options;
    this.url = options.url;
    this.client = failFastRedis(options.url);
    // Failed commands report themselves (and take the link down); the connection's own errors
    // would only repeat them.
    this.client.on('error', () => undefined);
  }

  get state(): RedisState {
    return this.#state;
  }

  /** True while Redis is asked. */
  get up(): boolean {
    return this.#state === 'up';
  }

  /**
   * Runs `command` on the client while the link is up; throws {@link RedisDown} at once while it
   * is down. A failure that says Redis does not answer takes the link down before it is thrown on.
   */
  async run<T>(command: (client: Redis) => Promise<T>): Promise<T> {
    if (!this.up) throw new RedisDown();
    try {
      return await command(this.client);
    } catch (error) {
      this.failed(error);
      throw error;
    }
  }

  /** Tells the link a command failed: one that says Redis does not answer takes it down. */
  failed(error: unknown): void {
    if (!isUnreachable(error) || this.#state === 'down' || this.#closed) return;
    this.#state = 'down';
    this.#options.onChange?.('down', error instanceof Error ? error.message : String(error));
    this.#probe = setInterval(() => void this.#ping(), this.#options.probeMs ?? PROBE_MS);
    this.#probe.unref();
  }

  /** Waits up to `timeoutMs` for the connection; resolves either way. */
  async ready(timeoutMs: number): Promise<void> {
    if (this.client.status === 'ready') return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.client.once('ready', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    if ((this.client.status as string) !== 'ready') {
      this.failed(new Error('ECONNREFUSED: not ready at boot'));
    }
  }

  async #ping(): Promise<void> {
    try {
      await this.client.ping();
    } catch {
      return;
    }
    if (this.#state === 'up' || this.#closed) return;
    clearInterval(this.#probe);
    this.#probe = undefined;
    this.#state = 'up';
    this.#options.onChange?.('up');
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#probe);
    try {
      await this.client.quit();
    } catch {
      this.client.disconnect();
    }
  }
}
