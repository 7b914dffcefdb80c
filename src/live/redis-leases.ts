import { createHmac, randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { RedisLink } from '../redis/redis-link.js';
import { failFastRedis, sharedPrefix } from '../redis/shared-redis.js';
import type { PollerLease, PollResult } from './event-poller.js';

/**
 * Takes the lease when it is free or already ours (then renews it): 1 when this instance holds
 * it now, 0 when another does. KEYS[1] the lease; ARGV[1] our id, ARGV[2] its time to live (ms).
 */
const TAKE = `
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if holder then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
`;

/** Deletes the lease if it is ours. */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

/** Options of {@link RedisLeases}. */
export interface RedisLeaseOptions {
  /** The process's link to the shared Redis (`REDIS_URL`): while it is down, each instance polls. */
  link: RedisLink;
  /** The upstream's URL: pollers of two services share nothing. */
  upstream: string;
  /** Names are keyed with it (`CURSOR_SECRET`): a poller's name holds a hash of its workspace key. */
  secret: string;
  /** How long a lease lasts unless renewed: a dead holder's pollers are taken over after it. */
  ttlMs: number;
  /** Told when Redis fails: the instance then polls on its own. */
  onError?: (message: string) => void;
}

/** A published poll, as it crosses Redis. */
interface Batch {
  /** The instance that polled: it does not hear its own. */
  from: string;
  records: PollResult['records'];
  remaining: number | null;
}

/**
 * Pollers shared by every instance through Redis (`REDIS_URL`): for each (workspace, endpoint,
 * filters) one instance holds a lease and polls; it publishes each poll's records on the poller's
 * channel and keeps its watermark beside the lease, and every instance's subscribers get them
 * from there. A lease not renewed within `ttlMs` (its holder died) is taken by the next instance
 * that asks, from the watermark left. While Redis fails, every instance polls on its own: events
 * keep coming, at the price of one poll per instance.
 */
export class RedisLeases {
  readonly #options: RedisLeaseOptions;
  readonly #id = randomUUID();
  readonly #prefix: string;
  readonly #client: Redis;
  readonly #subscriber: Redis;
  readonly #handlers = new Map<string, Set<(batch: Batch) => void>>();

  constructor(options: RedisLeaseOptions) {
    this.#options = options;
    this.#prefix = `${sharedPrefix(options.upstream)}live:`;
    this.#client = options.link.client;
    this.#subscriber = failFastRedis(options.link.url);
    this.#subscriber.on('error', () => undefined);
    this.#subscriber.on('messageBuffer', (channel: Buffer, message: Buffer) => {
      const handlers = this.#handlers.get(channel.toString());
      if (!handlers) return;
      let batch: Batch;
      try {
        batch = JSON.parse(message.toString()) as Batch;
      } catch {
        return;
      }
      for (const handler of handlers) handler(batch);
    });
    // Channels are subscribed again after a reconnection.
    this.#subscriber.on('ready', () => {
      const channels = [...this.#handlers.keys()];
      if (channels.length > 0) this.#subscriber.subscribe(...channels).catch(() => undefined);
    });
  }

  /** The lease of the poller named `name` (see `pollerName`). */
  lease(name: string): PollerLease {
    const id = createHmac('sha256', this.#options.secret).update(name).digest('base64url');
    const lease = `${this.#prefix}lease:${id}`;
    const mark = `${this.#prefix}mark:${id}`;
    const channel = `${this.#prefix}events:${id}`;
    const client = this.#client;
    const { ttlMs } = this.#options;
    const fail = (what: string) => (error: unknown) => {
      this.#options.link.failed(error);
      this.#options.onError?.(
        `subscriptions: Redis failed (${what}: ${(error as Error).message}); this instance polls on its own`,
      );
    };
    return {
      acquire: async () => {
        if (!this.#options.link.up) return { lead: true, mark: null };
        try {
          const held = (await client.eval(TAKE, 1, lease, this.#id, ttlMs)) === 1;
          return { lead: held, mark: held ? await client.get(mark) : null };
        } catch (error) {
          fail('lease')(error);
          return { lead: true, mark: null };
        }
      },
      publish: (result, watermark) => {
        const batch: Batch = {
          from: this.#id,
          records: result.records,
          remaining: result.remaining,
        };
        client
          .multi()
          .set(mark, watermark, 'PX', Math.max(ttlMs * 10, 3_600_000))
          .publish(channel, JSON.stringify(batch))
          .exec()
          .catch(fail('publish'));
      },
      listen: (handler) => {
        let handlers = this.#handlers.get(channel);
        if (!handlers) {
          this.#handlers.set(channel, (handlers = new Set()));
          this.#subscriber.subscribe(channel).catch(fail('subscribe'));
        }
        const set = handlers;
        const own = (batch: Batch) => {
          if (batch.from !== this.#id)
            handler({ records: batch.records, remaining: batch.remaining, credits: 0 });
        };
        set.add(own);
        return () => {
          set.delete(own);
          if (set.size === 0) {
            this.#handlers.delete(channel);
            this.#subscriber.unsubscribe(channel).catch(() => undefined);
          }
          client.eval(RELEASE, 1, lease, this.#id).catch(() => undefined);
        };
      },
    };
  }

  /** Waits up to `timeoutMs` for both connections; resolves either way. */
  async ready(timeoutMs: number): Promise<void> {
    const wait = (redis: Redis) =>
      redis.status === 'ready'
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, timeoutMs);
            redis.once('ready', () => {
              clearTimeout(timer);
              resolve();
            });
          });
    await Promise.all([wait(this.#client), wait(this.#subscriber)]);
  }

  /** The link's client is the process's: whoever made it closes it. */
  async close(): Promise<void> {
    this.#subscriber.disconnect();
  }
}
