import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';

/**
 * ioredis, loaded when the first client is made: a gateway without `REDIS_URL` never loads it
 * (about 2 MB of heap at rest). It is a CommonJS package, so it loads synchronously.
 */
const load = createRequire(import.meta.url);

/**
 * The prefix of every name the gateway keeps in Redis for the service at `upstream` (its pages,
 * claims and quota buckets): `bsg:v2:<hash of the URL>:`, so that two upstreams share nothing.
 */
export function sharedPrefix(upstream: string): string {
  return `bsg:v2:${createHash('sha256').update(upstream).digest('base64url').slice(0, 12)}:`;
}

/**
 * A client of the shared Redis (`REDIS_URL`) that never makes a request wait for it: commands
 * fail at once while Redis is unreachable (no offline queue, no retries of a command, 500 ms per
 * command), and the connection comes back by itself (every 250 ms to 2 s). Its callers fall back
 * (a page cache miss, a quota kept in memory) and report the failure themselves.
 */
export function failFastRedis(url: string): Redis {
  const { Redis: Client } = load('ioredis') as { Redis: typeof Redis };
  return new Client(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 1_000,
    commandTimeout: 500,
    retryStrategy: (attempt) => Math.min(attempt * 250, 2_000),
  });
}
