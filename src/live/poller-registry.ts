import { createHash } from 'node:crypto';
import { buildFilterQuery } from '../upstream/build-query.js';
import type { EndpointFilters } from '../upstream/endpoints.js';
import type { SharedPipeline } from '../upstream/operation-call.js';
import { UpstreamSession } from '../upstream/upstream-session.js';
import {
  EventPoller,
  type EventRecord,
  type FetchSince,
  type PollListener,
} from './event-poller.js';
import { isRecord, type ListEnvelope } from '../upstream/types.js';
import type { RedisLeases } from './redis-leases.js';

/** The three event lists a subscription can follow. */
export type EventEndpoint = 'fundingEvents' | 'execMoves' | 'acquisitions';

/** What a registry tells the metrics and the log, per endpoint. */
export interface LiveEvents {
  /** The number of pollers or subscribers changed. */
  changed?(pollers: number, subscribers: number): void;
  polled?(endpoint: EventEndpoint, records: number, fresh: number, credits: number): void;
  failed?(endpoint: EventEndpoint, error: unknown, delayMs: number): void;
}

/** Options of {@link PollerRegistry}. */
export interface RegistryOptions {
  shared: SharedPipeline;
  /** Between two polls of a poller (`POLL_INTERVAL_SECONDS`). */
  intervalMs: number;
  /** Bounds each poll, all its pages (`OPERATION_TIMEOUT_MS`). */
  pollTimeoutMs: number;
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
 * Every poll of `key`'s list from `since`: each page followed to its end, with the key, fresh (a
 * cached page would hide what is new), through the shared pipeline (retries, the breaker, the
 * ledger), within `timeoutMs` in all.
 */
export function fetchSince(shared: SharedPipeline, key: PollerKey, timeoutMs: number): FetchSince {
  return async (since, maxRecords = Infinity) => {
    const session = new UpstreamSession(shared, {
      apiKey: key.apiKey,
      concurrency: 1,
      fresh: true,
      deadlineMs: timeoutMs,
    });
    const query = buildFilterQuery(key.endpoint, { ...key.filters, since });
    const records: EventRecord[] = [];
    try {
      let cursor: string | null = null;
      for (;;) {
        const limit = Math.min(POLL_LIMIT, maxRecords - records.length);
        if (limit < 1) break;
        const page: ListEnvelope<EventRecord | null> = await session.page(key.endpoint, query, {
          cursor,
          limit,
        });
        for (const item of page.data) if (isRecord(item)) records.push(item);
        cursor = page.pagination.nextCursor;
        if (!page.pagination.hasMore || !cursor) break;
      }
    } finally {
      session.end();
    }
    return { records, credits: session.ledger.used, remaining: session.ledger.remaining };
  };
}

/** A poller's name: the key's hash (never the key), the endpoint, the canonical filters. */
export function pollerName(key: PollerKey): string {
  const workspace = createHash('sha256').update(key.apiKey).digest('base64url').slice(0, 22);
  return `${workspace}:${key.endpoint}:${buildFilterQuery(key.endpoint, key.filters)}`;
}

/**
 * The pollers of one gateway instance, one per (workspace key, endpoint, filters), made when the
 * first subscriber joins and stopped when the last leaves.
 */
export class PollerRegistry {
  readonly #options: RegistryOptions;
  readonly #pollers = new Map<string, EventPoller>();
  #subscribers = 0;

  constructor(options: RegistryOptions) {
    this.#options = options;
  }

  get pollers(): number {
    return this.#pollers.size;
  }

  get subscribers(): number {
    return this.#subscribers;
  }

  /** Joins `listener` to the poller of `key` (made if there is none); returns how to leave. */
  join(key: PollerKey, listener: PollListener): () => void {
    const name = pollerName(key);
    let poller = this.#pollers.get(name);
    if (!poller) {
      const { shared, intervalMs, pollTimeoutMs, events, leases } = this.#options;
      const created: EventPoller = new EventPoller({
        fetch: fetchSince(shared, key, pollTimeoutMs),
        intervalMs,
        since: new Date().toISOString(),
        events: {
          polled: (records, fresh, credits) =>
            events?.polled?.(key.endpoint, records, fresh, credits),
          failed: (error, delayMs) => events?.failed?.(key.endpoint, error, delayMs),
        },
        lease: leases?.lease(name),
        onDead: () => {
          if (this.#pollers.get(name) === created) this.#pollers.delete(name);
          this.#changed();
        },
      });
      poller = created;
      this.#pollers.set(name, poller);
    }
    const joined = poller;
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
        if (this.#pollers.get(name) === joined) this.#pollers.delete(name);
      }
      this.#changed();
    };
  }

  /** Stops every poller (shutdown); their subscribers are ended by their feeds. */
  close(): void {
    for (const poller of this.#pollers.values()) poller.stop();
    this.#pollers.clear();
  }

  #changed(): void {
    this.#options.events?.changed?.(this.#pollers.size, this.#subscribers);
  }
}
