import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';

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
  return new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 1_000,
    commandTimeout: 500,
    retryStrategy: (attempt) => Math.min(attempt * 250, 2_000),
  });
}
