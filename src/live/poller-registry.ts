import { createHash } from 'node:crypto';
import { ErrorCode, gatewayError } from '../errors.js';
import { buildFilterQuery } from '../upstream/build-query.js';
import type { EndpointFilters } from '../upstream/endpoints.js';
import type { SharedPipeline } from '../upstream/operation-call.js';
import { UpstreamError } from '../upstream/upstream-error.js';
import { UpstreamSession } from '../upstream/upstream-session.js';
import {
  EventPoller,
  type EventRecord,
  type FetchSince,
  type PollListener,
} from './event-poller.js';
import { isRecord, type ListEnvelope } from '../upstream/types.js';
import { PollRate } from './poll-rate.js';
import type { RedisLeases } from './redis-leases.js';

/** The three event lists a subscription can follow. */
export type EventEndpoint = 'fundingEvents' | 'execMoves' | 'acquisitions';

/** What a registry tells the metrics and the log, per endpoint. */
export interface LiveEvents {
  /** The number of pollers or subscribers changed. */
  changed?(pollers: number, subscribers: number): void;
  polled?(endpoint: EventEndpoint, records: number, fresh: number, credits: number): void;
  failed?(endpoint: EventEndpoint, error: unknown, delayMs: number): void;
  /** A subscription was refused: its key has `limit` pollers already. */
  refused?(endpoint: EventEndpoint, limit: number): void;
}

/** Options of {@link PollerRegistry}. */
export interface RegistryOptions {
  shared: SharedPipeline;
  /** Between two polls of a poller (`POLL_INTERVAL_SECONDS`). */
  intervalMs: number;
  /** Bounds each page request of a poll, from when it is sent (`OPERATION_TIMEOUT_MS`). */
  pollTimeoutMs: number;
  /** Pollers one upstream key may have at once (`MAX_POLLERS_PER_KEY`). */
  maxPollersPerKey: number;
  /** Page requests per second the polls of one upstream key may send (`POLL_REQUESTS_PER_SECOND`). */
  pollRequestsPerSecond: number;
  events?: LiveEvents;
  /** Shared with other instances through Redis: one poller per name across all of them. */
  leases?: RedisLeases;
}

/** Which poller a subscription joins. */
export interface PollerKey<E extends EventEndpoint = EventEndpoint> {
  apiKey: string;
  endpoint: E;
  /** The subscription's filters, `since` left out. */
  filters: EndpointFilters<E>;
}

/** Records a poll page asks for: the most the service gives at once. */
const POLL_LIMIT = 100;

/**
 * The pipeline polls go through: the shared one, except that a 429 is never waited out inside
 * the call, so that it reaches {@link fetchSince}, which pauses every poll of the key.
 */
export function pollPipeline(shared: SharedPipeline): SharedPipeline {
  return { ...shared, retry: { ...shared.retry, retryAfterMaxMs: 0 } };
}

/**
 * Every poll of `key`'s list from `since`: each page followed to its end, with the key, fresh (a
 * cached page would hide what is new), through `polls` (`pollPipeline`: retries, the breaker, the
 * ledger). Each page waits for the key's turn in `rate` first (the wait ends, and nothing is sent,
 * when `signal` aborts), and is bounded by `timeoutMs` once sent; a 429 pauses the key's turns.
 */
export function fetchSince(
  polls: SharedPipeline,
  key: PollerKey,
  timeoutMs: number,
  rate: PollRate,
): FetchSince {
  return async (since, maxRecords = Infinity, signal) => {
    const query = buildFilterQuery(key.endpoint, { ...key.filters, since });
    const records: EventRecord[] = [];
    let credits = 0;
    let remaining: number | null = null;
    let cursor: string | null = null;
    for (;;) {
      const limit = Math.min(POLL_LIMIT, maxRecords - records.length);
      if (limit < 1) break;
      await rate.turn(key.apiKey, signal);
      // A session per page: the deadline bounds a request, not the turns waited between pages.
      const session = new UpstreamSession(polls, {
        apiKey: key.apiKey,
        concurrency: 1,
        fresh: true,
        deadlineMs: timeoutMs,
      });
      let page: ListEnvelope<EventRecord | null>;
      try {
        page = await session.page(key.endpoint, query, { cursor, limit });
        rate.answered(key.apiKey);
      } catch (error) {
        if (error instanceof UpstreamError && error.code === 'TOO_MANY_REQUESTS') {
          rate.tooManyRequests(key.apiKey, error.retryAfter);
        }
        throw error;
      } finally {
        session.end();
        credits += session.ledger.used;
        remaining = session.ledger.remaining ?? remaining;
      }
      for (const item of page.data) if (isRecord(item)) records.push(item);
      cursor = page.pagination.nextCursor;
      if (!page.pagination.hasMore || !cursor) break;
    }
    return { records, credits, remaining };
  };
}

/** A poller's name: the key's hash (never the key), the endpoint, the canonical filters. */
export function pollerName(key: PollerKey): string {
  const workspace = createHash('sha256').update(key.apiKey).digest('base64url').slice(0, 22);
  return `${workspace}:${key.endpoint}:${buildFilterQuery(key.endpoint, key.filters)}`;
}

/**
 * The pollers of one gateway instance, one per (workspace key, endpoint, filters), made when the
 * first subscriber joins and stopped when the last leaves. Per upstream key, at most
 * `maxPollersPerKey` pollers (a subscription that needs one more is refused, having started
 * nothing), and their page requests at most `pollRequestsPerSecond` (`PollRate`): however many
 * subscriptions a key has, its polls leave the rest of its rate limit to its queries.
 */
export class PollerRegistry {
  readonly #options: RegistryOptions;
  readonly #pollers = new Map<string, EventPoller>();
  /** The number of pollers of each upstream key. */
  readonly #perKey = new Map<string, number>();
  readonly #polls: SharedPipeline;
  readonly #rate: PollRate;
  #subscribers = 0;

  constructor(options: RegistryOptions) {
    this.#options = options;
    this.#polls = pollPipeline(options.shared);
    this.#rate = new PollRate({ perSecond: options.pollRequestsPerSecond });
  }

  get pollers(): number {
    return this.#pollers.size;
  }

  get subscribers(): number {
    return this.#subscribers;
  }

  /**
   * Joins `listener` to the poller of `key` (made if there is none); returns how to leave.
   *
   * @throws GraphQLError TOO_MANY_SUBSCRIPTIONS (`scope: 'key'`) when a new poller would go past
   *   `maxPollersPerKey`: nothing is started, nothing is sent.
   */
  join(key: PollerKey, listener: PollListener): () => void {
    const name = pollerName(key);
    const joined = this.#pollers.get(name) ?? this.#start(name, key);
    joined.add(listener);
    this.#subscribers += 1;
    this.#changed();
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.#subscribers -= 1;
      if (joined.remove(listener)) {
        joined.stop();
        this.#forget(name, joined, key.apiKey);
      }
      this.#changed();
    };
  }

  /** Stops every poller (shutdown); their subscribers are ended by their feeds. */
  close(): void {
    for (const poller of this.#pollers.values()) poller.stop();
    this.#pollers.clear();
    this.#perKey.clear();
  }

  /** A new poller for `key`, when the key has room for one. */
  #start(name: string, key: PollerKey): EventPoller {
    const { intervalMs, pollTimeoutMs, maxPollersPerKey, events, leases } = this.#options;
    const count = this.#perKey.get(key.apiKey) ?? 0;
    if (count >= maxPollersPerKey) {
      events?.refused?.(key.endpoint, maxPollersPerKey);
      throw gatewayError(
        ErrorCode.TOO_MANY_SUBSCRIPTIONS,
        `Subscriptions with your workspace's API key already poll ${maxPollersPerKey} distinct lists and filters, the most one key may: end one of them first, or subscribe with the same filters as one that runs (it then shares its poller).`,
        { limit: maxPollersPerKey, scope: 'key' },
      );
    }
    const poller: EventPoller = new EventPoller({
      fetch: fetchSince(this.#polls, key, pollTimeoutMs, this.#rate),
      intervalMs,
      since: new Date().toISOString(),
      events: {
        polled: (records, fresh, credits) =>
          events?.polled?.(key.endpoint, records, fresh, credits),
        failed: (error, delayMs) => events?.failed?.(key.endpoint, error, delayMs),
      },
      lease: leases?.lease(name),
      onDead: () => {
        this.#forget(name, poller, key.apiKey);
        this.#changed();
      },
    });
    this.#pollers.set(name, poller);
    this.#perKey.set(key.apiKey, count + 1);
    return poller;
  }

  /** Takes a stopped poller out of the counts, unless another has its name already. */
  #forget(name: string, poller: EventPoller, apiKey: string): void {
    if (this.#pollers.get(name) !== poller) return;
    this.#pollers.delete(name);
    const left = (this.#perKey.get(apiKey) ?? 1) - 1;
    if (left > 0) this.#perKey.set(apiKey, left);
    else this.#perKey.delete(apiKey);
  }

  #changed(): void {
    this.#options.events?.changed?.(this.#pollers.size, this.#subscribers);
  }
}
