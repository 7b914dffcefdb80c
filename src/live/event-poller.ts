import { UpstreamError } from '../upstream/upstream-error.js';

/** An event record as the poller reads it: its id and when the service discovered it. */
export interface EventRecord {
  readonly id: string;
  readonly discoveredAt: string | null;
}

/** What one poll found: every page of `since` followed to its end. */
export interface PollResult {
  readonly records: readonly EventRecord[];
  /** Credits the service charged for the poll's pages. */
  readonly credits: number;
  /** The workspace's credits left, from the last page; null when it did not say. */
  readonly remaining: number | null;
}

/**
 * Asks the service for the events discovered or announced after `since`: every page, or pages
 * until `maxRecords` are in (a catch-up fetches no more than its subscriber can take). `signal`
 * aborts when the poller stops: a page not sent yet is not sent.
 */
export type FetchSince = (
  since: string,
  maxRecords?: number,
  signal?: AbortSignal,
) => Promise<PollResult>;

/** One subscriber of a poller. */
export interface PollListener {
  /** Records discovered at or before this moment (epoch ms) are not for it. */
  readonly from: number;
  /**
   * The `since` it asked for, as the service reads it: its first poll starts there (a catch-up);
   * null when it asked for none (only what is discovered once it started).
   */
  readonly since: string | null;
  /** The most records it can still take (its budget): a catch-up fetches no more. */
  capacity(): number;
  /**
   * New records for it, oldest first; `remaining` as the poll's last page said; `paid` when they
   * come from its own catch-up (charged to it by {@link caughtUp}).
   */
  deliver(records: readonly EventRecord[], remaining: number | null, paid?: boolean): void;
  /** Its catch-up is done: what the service charged for it. */
  caughtUp?(credits: number): void;
  /** Its poller failed for good (the service refused the key or has no credits). */
  end(error: Error): void;
}

/** What a poller tells the metrics and the log. */
export interface PollerEvents {
  /** A poll (and its pages) ended: the records it returned, how many were new, its credits. */
  polled?(records: number, fresh: number, credits: number): void;
  /** A poll failed; the next one waits `delayMs`. */
  failed?(error: unknown, delayMs: number): void;
}

/** What a shared poller hears from its lease (see {@link PollerLease.start}). */
export interface LeaseHandlers {
  /** Another instance's poll, in the order they polled. */
  hear(result: PollResult): void;
  /**
   * Polls of other instances may be lost to this one (their log was trimmed or emptied, or their
   * holder polled while Redis was away): poll from the watermark as it is now.
   */
  missed(): void;
  /**
   * This instance holds the lease now: poll when the next poll is due, `lastPolledAt` (epoch ms,
   * when the previous holder last polled; null when unknown) plus the interval, at once if past.
   */
  lead(lastPolledAt: number | null): void;
}

/**
 * A poller shared by several instances (`RedisLeases`): one holds the lease and polls, the others
 * hear its polls.
 */
export interface PollerLease {
  /** Starts hearing; resolves once this instance knows whether it holds the lease. */
  start(handlers: LeaseHandlers): Promise<void>;
  /** This instance polls now: it holds the lease, or cannot ask Redis (each polls on its own). */
  readonly leads: boolean;
  /** Tells the other instances what a poll of this one found, and when it polled. */
  publish(result: PollResult): void;
  /** Stops hearing, and gives the lease up. */
  stop(): void;
}

/** Options of {@link EventPoller}. */
export interface PollerOptions {
  fetch: FetchSince;
  /** Between two polls (`POLL_INTERVAL_SECONDS`). */
  intervalMs: number;
  /** The first watermark: the moment the poller starts, as an ISO timestamp. */
  since: string;
  events?: PollerEvents;
  /** Told once when the poller ended for good (a fatal upstream error). */
  onDead?: () => void;
  /** Shared with other instances: this one polls only while it leads. */
  lease?: PollerLease;
}

/** The longest wait between polls while the service fails. */
const MAX_BACKOFF_MS = 5 * 60_000;
/** A shared poller's poll this close to its due moment is not early. */
const DUE_SLACK_MS = 50;
/** The ids a poller remembers to deliver a record once, however often the service returns it. */
const SEEN_MAX = 20_000;

/** Upstream codes that no retry can fix: the poller ends its subscriptions with them. */
const FATAL_CODES: ReadonlySet<string> = new Set([
  'UNAUTHORIZED',
  'PAYMENT_REQUIRED',
  'FORBIDDEN',
  'INVALID_INPUT',
]);

/** True for an upstream failure that ends the poller (401, 402, 403, 400), not a pause. */
export function isFatal(error: unknown): boolean {
  return error instanceof UpstreamError && FATAL_CODES.has(error.code);
}

/** Epoch ms of a record's `discoveredAt`; NaN when it has none. */
function timeOf(record: EventRecord): number {
  return record.discoveredAt === null ? Number.NaN : Date.parse(record.discoveredAt);
}

/** Oldest first, then by id, records without a time last. */
function oldestFirst(a: EventRecord, b: EventRecord): number {
  const ta = timeOf(a);
  const tb = timeOf(b);
  if (ta !== tb) {
    if (Number.isNaN(ta)) return 1;
    if (Number.isNaN(tb)) return -1;
    return ta - tb;
  }
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** A listener's state: while it waits for its first poll from its own `since`, what it got. */
interface Member {
  readonly listener: PollListener;
  /** Ids delivered to it before its catch-up ran; undefined once caught up. */
  delivered?: Set<string>;
}

/**
 * One poll loop for one (workspace, endpoint, filters), shared by its listeners. Each poll asks
 * for `since` = the newest `discoveredAt` seen, follows the pages to the end, and hands each
 * listener the records it has not had, oldest first: a record is new once, by id, however often
 * the service returns it (its `since` also matches events announced after it), and only to the
 * listeners that started before its discovery. A listener that asks for a `since` gets one poll
 * of its own from there first (a catch-up), of at most as many records as it can take (its
 * budget): a subscription pays for no past it cannot receive.
 *
 * Shared with other instances (`lease`), it polls only while it leads (it holds the lease, or
 * Redis is away), an interval after the last poll of whoever held the lease; the holder's polls
 * come through the lease otherwise. Told that some of them were lost to it, it polls once from
 * its watermark as it was then (a record may be charged again; delivered once).
 *
 * Faults keep the watermark: the next poll waits twice as long each time (at most 5 minutes, at
 * least the service's `Retry-After`) and misses nothing once the service answers. A 401, 402, 403
 * or 400 ends every listener with its error, and the poller with them.
 */
export class EventPoller {
  readonly #options: PollerOptions;
  readonly #members = new Map<PollListener, Member>();
  readonly #catchUps: Member[] = [];
  /** The member whose catch-up is being fetched now. */
  #fetching: Member | undefined;
  readonly #seen = new Map<string, true>();
  #watermark: string;
  #watermarkTime: number;
  /** Polls from here before the next one as usual: what other instances' lost polls held. */
  #recoverFrom: string | undefined;
  /** The earliest moment of this instance's next poll while it holds the lease (epoch ms). */
  #dueAt = 0;
  #timer: NodeJS.Timeout | undefined;
  #polling = false;
  #failures = 0;
  #stopped = false;
  readonly #stopping = new AbortController();
  /** Resolves once the lease (if any) says whether this instance polls. */
  readonly #started: Promise<void>;

  constructor(options: PollerOptions) {
    this.#options = options;
    this.#watermark = options.since;
    this.#watermarkTime = Date.parse(options.since);
    this.#started =
      options.lease
        ?.start({
          hear: (result) => {
            if (!this.#stopped) this.#absorb(result);
          },
          missed: () => {
            if (this.#stopped) return;
            this.#recoverFrom ??= this.#watermark;
            if (!this.#polling) this.#schedule(0);
          },
          lead: (lastPolledAt) => {
            if (this.#stopped) return;
            this.#dueAt = (lastPolledAt ?? 0) + options.intervalMs;
            if (!this.#polling && this.#failures === 0) {
              this.#schedule(Math.max(0, this.#dueAt - Date.now()));
            }
          },
        })
        .catch(() => undefined) ?? Promise.resolve();
    this.#schedule(0);
  }

  /** The `since` of the next poll. */
  get watermark(): string {
    return this.#watermark;
  }

  get listeners(): number {
    return this.#members.size;
  }

  /** Adds a listener; one that starts before the watermark is caught up by the next poll. */
  add(listener: PollListener): void {
    const member: Member = { listener };
    this.#members.set(listener, member);
    if (listener.since !== null) {
      member.delivered = new Set();
      this.#catchUps.push(member);
      if (!this.#polling) this.#schedule(0);
    }
  }

  /** Removes a listener; true when none is left (the caller then stops the poller). */
  remove(listener: PollListener): boolean {
    const member = this.#members.get(listener);
    if (member) {
      this.#members.delete(listener);
      const at = this.#catchUps.indexOf(member);
      // A catch-up that never started cost nothing; one under way is told when it returns.
      if (at >= 0 && member !== this.#fetching) {
        this.#catchUps.splice(at, 1);
        listener.caughtUp?.(0);
      }
    }
    return this.#members.size === 0;
  }

  /** Stops polling; a poll in flight ends unheard, and sends no further page. */
  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#stopping.abort();
    clearTimeout(this.#timer);
    this.#options.lease?.stop();
  }

  #schedule(delayMs: number): void {
    if (this.#stopped) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.#tick(), delayMs);
    this.#timer.unref();
  }

  async #tick(): Promise<void> {
    if (this.#stopped || this.#polling) return;
    this.#polling = true;
    try {
      await this.#started;
      while (this.#catchUps.length > 0 && !this.#stopped) {
        const member = this.#catchUps[0]!;
        const { since } = member.listener;
        this.#fetching = member;
        const result = await this.#options.fetch(
          since ?? this.#watermark,
          member.listener.capacity(),
          this.#stopping.signal,
        );
        this.#fetching = undefined;
        this.#catchUps.splice(this.#catchUps.indexOf(member), 1);
        member.listener.caughtUp?.(result.credits);
        this.#absorb(result, member);
      }
      if (!this.#stopped) await this.#pollOrHear();
      this.#failures = 0;
      this.#polling = false;
      // A holder's next poll is due an interval after its last, or its predecessor's.
      const { lease, intervalMs } = this.#options;
      const due = lease?.leads ? this.#dueAt - Date.now() : 0;
      this.#schedule(due > DUE_SLACK_MS ? due : intervalMs);
    } catch (error) {
      this.#polling = false;
      const failed = this.#fetching;
      this.#fetching = undefined;
      // A catch-up that failed after its listener left is not tried again.
      if (failed && !this.#members.has(failed.listener)) {
        this.#catchUps.splice(this.#catchUps.indexOf(failed), 1);
        failed.listener.caughtUp?.(0);
      }
      if (this.#stopped) return;
      if (isFatal(error)) {
        this.stop();
        const members = [...this.#members.values()];
        this.#members.clear();
        for (const waiting of this.#catchUps.splice(0)) waiting.listener.caughtUp?.(0);
        for (const { listener } of members) listener.end(error as Error);
        this.#options.onDead?.();
        return;
      }
      this.#failures += 1;
      const backoff = Math.min(this.#options.intervalMs * 2 ** this.#failures, MAX_BACKOFF_MS);
      const retryAfter = error instanceof UpstreamError ? (error.retryAfter ?? 0) * 1000 : 0;
      const delay = Math.max(backoff, retryAfter);
      this.#options.events?.failed?.(error, delay);
      this.#schedule(delay);
    }
  }

  /**
   * Polls from the watermark when this instance leads (its poll due) and tells the others; polls
   * from where lost polls of others began when told to (then the others are not told, unless it
   * leads). Otherwise the holder's polls come through the lease.
   */
  async #pollOrHear(): Promise<void> {
    const { lease } = this.#options;
    const recover = this.#recoverFrom;
    const leads = !lease || lease.leads;
    const early = lease !== undefined && Date.now() < this.#dueAt - DUE_SLACK_MS;
    if (recover === undefined && (!leads || early)) return;
    this.#recoverFrom = undefined;
    let result: PollResult;
    try {
      result = await this.#options.fetch(
        recover ?? this.#watermark,
        undefined,
        this.#stopping.signal,
      );
    } catch (error) {
      if (recover !== undefined) this.#recoverFrom ??= recover;
      throw error;
    }
    if (this.#stopped) return;
    this.#absorb(result);
    if (leads) {
      this.#dueAt = Date.now() + this.#options.intervalMs;
      lease?.publish(result);
    }
  }

  /**
   * Hands out what a poll found. New records (ids not seen) go to every listener that started
   * before their discovery; records seen before go only to the listener being caught up, if it
   * has not had them. The watermark moves to the newest `discoveredAt`, except by a catch-up: it
   * may hold only the newest records since the last poll (its subscriber's budget), and the next
   * poll must still find the others (and, shared, tell the other instances of them all).
   */
  #absorb(result: PollResult, catchUp?: Member): void {
    const records = [...result.records].sort(oldestFirst);
    const batches = new Map<Member, EventRecord[]>();
    const give = (member: Member, record: EventRecord) => {
      let batch = batches.get(member);
      if (!batch) batches.set(member, (batch = []));
      batch.push(record);
      member.delivered?.add(record.id);
    };
    let fresh = 0;
    for (const record of records) {
      const time = timeOf(record);
      const isNew = !this.#seen.has(record.id);
      if (isNew) {
        fresh += 1;
        this.#remember(record.id);
        for (const member of this.#members.values()) {
          if (Number.isNaN(time) || time > member.listener.from) give(member, record);
        }
      } else if (
        catchUp &&
        this.#members.has(catchUp.listener) &&
        !catchUp.delivered?.has(record.id) &&
        (Number.isNaN(time) || time > catchUp.listener.from)
      ) {
        give(catchUp, record);
      }
      if (!catchUp && time > this.#watermarkTime && record.discoveredAt !== null) {
        this.#watermarkTime = time;
        this.#watermark = record.discoveredAt;
      }
    }
    if (catchUp) catchUp.delivered = undefined;
    this.#options.events?.polled?.(records.length, fresh, result.credits);
    for (const [member, batch] of batches) {
      member.listener.deliver(batch, result.remaining, member === catchUp);
    }
  }

  #remember(id: string): void {
    this.#seen.set(id, true);
    if (this.#seen.size > SEEN_MAX) {
      const oldest = this.#seen.keys().next().value;
      if (oldest !== undefined) this.#seen.delete(oldest);
    }
  }
}
