import { createHmac, randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { RedisLink } from '../redis/redis-link.js';
import { sharedPrefix } from '../redis/shared-redis.js';
import type { LeaseHandlers, PollerLease, PollResult } from './event-poller.js';

/** How long a lease lasts unless its holder renews it: a dead holder is replaced after it. */
export const LEASE_MS = 2_000;
/** How often an instance renews the leases it holds and tries to take the others. */
export const HEARTBEAT_MS = 500;
/** Entries a poller's stream keeps, about (Redis trims whole nodes, `MAXLEN ~`). */
const STREAM_ENTRIES = 1_000;
/** How long a poller's stream and mark outlive its last poll. */
const KEEP_MS = 3_600_000;
/** How long one read waits for new entries. */
const READ_BLOCK_MS = 1_000;
/** Entries one read takes per stream at most. */
const READ_COUNT = 100;
/** How long the reader waits before it tries again (Redis down, nothing to read). */
const IDLE_MS = 250;
/** A new poller reads entries from this long before it started: clocks differ a little. */
const SKEW_MS = 5_000;

/**
 * Renews the leases this instance holds and takes the free ones, all in one call. KEYS: each
 * lease, then its mark; ARGV[1] our id, ARGV[2] the lease's time to live (ms). For each lease:
 * 0 when another instance holds it, 1 when we held it (renewed), or, when we took it now, its
 * mark: when its last holder last polled (epoch ms), '' when none did.
 */
const BEAT = `
local result = {}
for i = 1, #KEYS, 2 do
  local holder = redis.call('GET', KEYS[i])
  if holder == ARGV[1] then
    redis.call('PEXPIRE', KEYS[i], ARGV[2])
    result[#result + 1] = 1
  elseif holder then
    result[#result + 1] = 0
  else
    redis.call('SET', KEYS[i], ARGV[1], 'PX', ARGV[2])
    result[#result + 1] = redis.call('GET', KEYS[i + 1]) or ''
  end
end
return result
`;

/** Deletes the lease if it is ours. */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

/**
 * A holder's poll: its time in the mark, and, when it found records or must say it missed some,
 * an entry in the stream, chained to the one before it (`prev`), so that a reader can tell when
 * entries it did not read are gone. KEYS[1] the stream, KEYS[2] the mark; ARGV: our id, the
 * batch ('' for none), missed ('1' or ''), now (ms), how long to keep both (ms), the stream's
 * bound, and the last entry id we read (a restarted Redis whose clock is behind must not
 * number new entries below it).
 */
const PUBLISH = `
redis.call('SET', KEYS[2], ARGV[4], 'PX', ARGV[5])
if ARGV[2] == '' then return 0 end
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local prev = '0-0'
local id = '*'
if last[1] then
  prev = last[1][1]
elseif ARGV[7] ~= '' then
  local time = redis.call('TIME')
  local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  local ms, seq = string.match(ARGV[7], '^(%d+)-(%d+)$')
  if ms and tonumber(ms) >= now then id = ms .. '-' .. (tonumber(seq) + 1) end
end
redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[6], id,
  'prev', prev, 'from', ARGV[1], 'missed', ARGV[3], 'batch', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1
`;

/** Options of {@link RedisLeases}. */
export interface RedisLeaseOptions {
  /** The process's link to the shared Redis (`REDIS_URL`): while it is down, each instance polls. */
  link: RedisLink;
  /** The upstream's URL: pollers of two services share nothing. */
  upstream: string;
  /** Names are keyed with it (`CURSOR_SECRET`): a poller's name holds a hash of its workspace key. */
  secret: string;
  /** Told when Redis fails: the instance then polls on its own. */
  onError?: (message: string) => void;
}

/** A poll as it crosses Redis. */
interface Batch {
  records: PollResult['records'];
  remaining: number | null;
}

/** One poller's share on this instance. */
interface Share {
  readonly lease: string;
  readonly mark: string;
  readonly stream: string;
  handlers?: LeaseHandlers;
  /** This instance holds the lease (as Redis last said). */
  held: boolean;
  /** The last entry read; before the first, entries after this moment (`<ms>-0`) are read. */
  position: string;
  /** `position` is an entry read (its successor names it as `prev`), not a moment. */
  chained: boolean;
  /** A poll of this instance did not reach the stream: its next entry says so (`missed`). */
  unpublished: boolean;
}

/** `a` before `b` (< 0), the same (0) or after (> 0), as stream ids (`<ms>-<seq>`) order. */
function compareIds(a: string, b: string): number {
  const [ams = 0, aseq = 0] = a.split('-').map(Number);
  const [bms = 0, bseq = 0] = b.split('-').map(Number);
  return ams !== bms ? ams - bms : aseq - bseq;
}

/** An entry's fields (`[name, value, name, value, ...]`) by name. */
function fieldsOf(list: string[]): Record<string, string> {
  const fields: Record<string, string> = {};
  for (let i = 0; i + 1 < list.length; i += 2) fields[list[i]!] = list[i + 1]!;
  return fields;
}

/**
 * Pollers shared by every instance through Redis (`REDIS_URL`). For each (workspace, endpoint,
 * filters), one instance holds a lease and polls; each poll's records go into the poller's Redis
 * Stream, which every instance reads from its own last entry, on a connection of its own
 * (`XREAD BLOCK`): an instance that was cut off or restarted its connection reads what it missed.
 * Each entry names the one before it: a reader that finds the one it read last is not there
 * (the stream was trimmed, or Redis restarted empty) polls from its own watermark; so does every
 * reader when the holder says it polled without Redis (`missed`). A record may then be charged
 * again, never lost.
 *
 * The lease lasts {@link LEASE_MS}; every {@link HEARTBEAT_MS} each instance renews the leases it
 * holds and tries to take the others, whatever `POLL_INTERVAL_SECONDS`: a dead holder is replaced
 * within about 2.5 s, and its successor polls when the next poll was due (at once if overdue),
 * from its own watermark. While the link is down (Redis slow, down or cut off), every instance
 * polls on its own.
 */
export class RedisLeases {
  readonly #options: RedisLeaseOptions;
  readonly #id = randomUUID();
  readonly #prefix: string;
  readonly #reader: Redis;
  readonly #shares = new Set<Share>();
  readonly #heartbeat: NodeJS.Timeout;
  #beating = false;
  /** The last lease call failed: until one succeeds, every poller polls (never none). */
  #unsure = false;
  #wake: (() => void) | undefined;
  #closed = false;

  constructor(options: RedisLeaseOptions) {
    this.#options = options;
    this.#prefix = `${sharedPrefix(options.upstream)}live:`;
    // Blocking reads on a connection of their own: no command timeout (a read waits up to
    // READ_BLOCK_MS by design), but a client-side bound of its wait plus a second, so that a
    // connection Redis no longer answers on cannot hold the reader.
    this.#reader = options.link.client.duplicate({
      commandTimeout: undefined,
      blockingTimeout: READ_BLOCK_MS,
      blockingTimeoutGrace: 1_000,
    });
    this.#reader.on('error', () => undefined);
    this.#heartbeat = setInterval(() => {
      // One heartbeat at a time: a slow Redis is not asked again before it answered.
      if (this.#beating) return;
      this.#beating = true;
      void this.#beat([...this.#shares]).finally(() => (this.#beating = false));
    }, HEARTBEAT_MS);
    this.#heartbeat.unref();
    void this.#read();
  }

  /** The lease of the poller named `name` (see `pollerName`); one at a time per name. */
  lease(name: string): PollerLease {
    const id = createHmac('sha256', this.#options.secret).update(name).digest('base64url');
    const share: Share = {
      lease: `${this.#prefix}lease:${id}`,
      mark: `${this.#prefix}mark:${id}`,
      stream: `${this.#prefix}events:${id}`,
      held: false,
      position: `${Math.max(0, Date.now() - SKEW_MS)}-0`,
      chained: false,
      unpublished: false,
    };
    const { link } = this.#options;
    const unsure = () => this.#unsure;
    return {
      start: async (handlers) => {
        share.handlers = handlers;
        this.#shares.add(share);
        this.#wake?.();
        await this.#beat([share]);
      },
      // eslint-disable-next-line no-restricted-syntax -- one object per poller, made when it starts
      get leads() {
        return share.held || !link.up || unsure();
      },
      publish: (result) => this.#publish(share, result),
      stop: () => {
        this.#shares.delete(share);
        share.handlers = undefined;
        if (!share.held || !link.up) return;
        share.held = false;
        link.run((client) => client.eval(RELEASE, 1, share.lease, this.#id)).catch(() => undefined);
      },
    };
  }

  /** Renews or takes the leases of `shares` (one call); tells a poller that takes its lease. */
  async #beat(shares: Share[]): Promise<void> {
    const { link } = this.#options;
    if (shares.length === 0 || !link.up || this.#closed) return;
    try {
      const keys = shares.flatMap((share) => [share.lease, share.mark]);
      const result = (await link.run((client) =>
        client.eval(BEAT, keys.length, ...keys, this.#id, LEASE_MS),
      )) as (number | string)[];
      this.#unsure = false;
      shares.forEach((share, i) => {
        const answer = result[i];
        if (answer === 0) {
          share.held = false;
        } else if (answer === 1) {
          share.held = true;
        } else if (answer !== undefined) {
          const was = share.held;
          share.held = true;
          const at = Number(answer);
          if (!was && this.#shares.has(share)) share.handlers?.lead(answer === '' ? null : at);
        }
      });
    } catch (error) {
      this.#unsure = true;
      this.#failed('lease', error);
    }
  }

  /** A holder's poll into the stream; without Redis, the next entry says it missed some. */
  #publish(share: Share, result: PollResult): void {
    const { link } = this.#options;
    if (!link.up) {
      share.unpublished = true;
      return;
    }
    const missed = share.unpublished;
    const batch: Batch = { records: result.records, remaining: result.remaining };
    const body = result.records.length > 0 || missed ? JSON.stringify(batch) : '';
    share.unpublished = false;
    link
      .run((client) =>
        client.eval(
          PUBLISH,
          2,
          share.stream,
          share.mark,
          this.#id,
          body,
          missed ? '1' : '',
          Date.now(),
          KEEP_MS,
          STREAM_ENTRIES,
          share.chained ? share.position : '',
        ),
      )
      .catch((error: unknown) => {
        share.unpublished = true;
        this.#failed('publish', error);
      });
  }

  /** Reads every poller's stream from its position, one blocking read for all, until closed. */
  async #read(): Promise<void> {
    while (!this.#closed) {
      const shares = [...this.#shares];
      if (shares.length === 0 || !this.#options.link.up) {
        await this.#idle();
        continue;
      }
      let reply: [string, [string, string[]][]][] | null;
      try {
        reply = (await this.#reader.xread(
          'COUNT',
          READ_COUNT,
          'BLOCK',
          READ_BLOCK_MS,
          'STREAMS',
          ...shares.map((share) => share.stream),
          ...shares.map((share) => share.position),
        )) as [string, [string, string[]][]][] | null;
      } catch (error) {
        // Its connection down or coming back says nothing the link does not (nor takes it down:
        // the link's own client may be back first); a read Redis refused is told.
        if (this.#reader.status === 'ready') {
          this.#options.onError?.(
            `subscriptions: reading the pollers' streams failed (${(error as Error).message})`,
          );
        }
        await this.#idle();
        continue;
      }
      if (!reply) continue;
      const byStream = new Map(shares.map((share) => [share.stream, share]));
      for (const [stream, entries] of reply) {
        const share = byStream.get(stream);
        if (share && this.#shares.has(share)) this.#deliver(share, entries);
      }
    }
  }

  /**
   * Hands a share's new entries to its poller, in order. An entry whose `prev` is not the last
   * one read (or, before the first, one after the moment it started from) says entries were lost;
   * the poller then polls from its own watermark, as it does when the holder says it `missed`.
   * Its own entries it absorbed when it polled.
   */
  #deliver(share: Share, entries: [string, string[]][]): void {
    for (const [id, list] of entries) {
      const entry = fieldsOf(list);
      const prev = entry['prev'] ?? '';
      const lost = share.chained ? prev !== share.position : compareIds(prev, share.position) > 0;
      share.position = id;
      share.chained = true;
      if (entry['from'] === this.#id) continue;
      if (lost || entry['missed'] === '1') share.handlers?.missed();
      let batch: Batch;
      try {
        batch = JSON.parse(entry['batch'] ?? '') as Batch;
      } catch {
        continue;
      }
      share.handlers?.hear({ records: batch.records, remaining: batch.remaining, credits: 0 });
    }
  }

  /** Waits a moment, or until a share is added or the leases close. */
  async #idle(): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, IDLE_MS);
      timer.unref();
      this.#wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.#wake = undefined;
  }

  #failed(what: string, error: unknown): void {
    this.#options.link.failed(error);
    this.#options.onError?.(
      `subscriptions: Redis failed (${what}: ${(error as Error).message}); this instance polls on its own until it answers`,
    );
  }

  /** Waits up to `timeoutMs` for the reader's connection; resolves either way. */
  async ready(timeoutMs: number): Promise<void> {
    if (this.#reader.status === 'ready') return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.#reader.once('ready', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Stops the heartbeat and the reader; the link's client is the process's (its maker closes it). */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#heartbeat);
    this.#wake?.();
    this.#reader.disconnect();
  }
}
