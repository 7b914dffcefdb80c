import type { GraphQLError } from 'graphql';
import { ErrorCode, gatewayError } from '../errors.js';
import type { EventRecord, PollListener } from './event-poller.js';

/** What a subscription's source yields: a record, or the error that ends it (its last payload). */
export type Delivery = { readonly record: EventRecord } | { readonly end: Error };

/** Options of {@link LiveFeed}. */
export interface FeedOptions {
  /** Records discovered at or before this moment (epoch ms) are not delivered. */
  from: number;
  /** The `since` the subscription asked for; null for none. */
  since: string | null;
  /** The most records its catch-up may fetch (its budget, and what its quota backs). */
  capacity(): number;
  /** Joins the feed to its poller; returns how to leave. */
  join(listener: PollListener): () => void;
  /**
   * Before each record: the error that ends the subscription instead (its budget or quota is
   * spent, its caller expired), or null to deliver it. `paid`: the record came from the
   * subscription's own catch-up, already charged to it. Called again only once the previous
   * payload was executed.
   */
  admit(paid: boolean): Promise<GraphQLError | null> | GraphQLError | null;
  /** Told what the subscription's catch-up was charged, once it is done. */
  caughtUp?(credits: number): void;
  /** Told of the workspace's credits left, from the poll that found the record. */
  remaining?(credits: number | null): void;
  /** Told of each record as it is handed out (its payload comes next). */
  onRecord?(record: EventRecord): void;
  /** Told once when the feed ends, however it ends, with the error that ended it, if any. */
  onEnd?(error: Error | undefined): void;
  /** Ends the feed when it aborts (the client went away). */
  signal?: AbortSignal;
}

/** Records a slow subscriber may have waiting before the feed ends (bounds its memory). */
export const FEED_MAX_QUEUED = 10_000;

/** A record waiting, and whether the subscription's own catch-up already paid for it. */
interface Queued {
  readonly record: EventRecord;
  readonly paid: boolean;
}

/**
 * One subscription's source of records: joined to its poller, it queues what the poller
 * delivers and yields one record per payload, oldest first, after `admit` allows it. It ends when
 * the client leaves (`return()`, or the signal), when `admit` refuses or {@link end} is called
 * (that error is yielded last), when the poller fails for good (likewise), when the subscriber
 * falls {@link FEED_MAX_QUEUED} records behind (SUBSCRIPTION_TOO_SLOW), or when {@link close} is
 * called (shutdown).
 */
export class LiveFeed implements AsyncIterableIterator<Delivery> {
  readonly #options: FeedOptions;
  #queue: (Queued | undefined)[] = [];
  #head = 0;
  #leave: (() => void) | undefined;
  #wake: (() => void) | undefined;
  /** Set once the feed will yield nothing more than its `#ending` error. */
  #done = false;
  #ending: Error | undefined;
  readonly #onAbort = () => this.close();

  constructor(options: FeedOptions) {
    this.#options = options;
    const listener: PollListener = {
      from: options.from,
      since: options.since,
      capacity: () => options.capacity(),
      deliver: (records, remaining, paid = false) => {
        if (this.#done) return;
        options.remaining?.(remaining);
        for (const record of records) this.#queue.push({ record, paid });
        if (this.#queue.length - this.#head > FEED_MAX_QUEUED) {
          this.end(
            gatewayError(
              ErrorCode.SUBSCRIPTION_TOO_SLOW,
              `The subscriber fell ${FEED_MAX_QUEUED} records behind (it reads too slowly, or its payloads take too long): the subscription ended. Subscribe again, with narrower filters if the events come faster than it can take them.`,
              { limit: FEED_MAX_QUEUED },
            ),
          );
        }
        this.#wake?.();
      },
      caughtUp: (credits) => options.caughtUp?.(credits),
      end: (error) => this.end(error),
    };
    this.#leave = options.join(listener);
    if (options.signal?.aborted) this.close();
    else options.signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async next(): Promise<IteratorResult<Delivery>> {
    for (;;) {
      if (this.#ending) {
        const end = this.#ending;
        this.#ending = undefined;
        return { done: false, value: { end } };
      }
      if (this.#done) return { done: true, value: undefined };
      const queued = this.#queue[this.#head];
      if (queued) {
        const refusal = await this.#options.admit(queued.paid);
        if (refusal) {
          this.end(refusal);
          continue;
        }
        if (this.#done) continue;
        this.#queue[this.#head++] = undefined;
        if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
          this.#queue = this.#queue.slice(this.#head);
          this.#head = 0;
        }
        this.#options.onRecord?.(queued.record);
        return { done: false, value: { record: queued.record } };
      }
      await new Promise<void>((resolve) => (this.#wake = resolve));
      this.#wake = undefined;
    }
  }

  async return(): Promise<IteratorResult<Delivery>> {
    this.close();
    this.#ending = undefined;
    return { done: true, value: undefined };
  }

  /** Ends the feed without an error: the subscription completes (shutdown, client gone). */
  close(): void {
    this.#finish(undefined);
  }

  /** Ends the feed with `error`, its last payload (what is queued is dropped). */
  end(error: Error): void {
    this.#finish(error);
  }

  #finish(error: Error | undefined): void {
    if (this.#done) return;
    this.#done = true;
    this.#ending = error;
    this.#queue = [];
    this.#head = 0;
    this.#options.signal?.removeEventListener('abort', this.#onAbort);
    this.#leave?.();
    this.#leave = undefined;
    this.#options.onEnd?.(error);
    this.#wake?.();
  }
}
