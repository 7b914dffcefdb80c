import type { GraphQLError } from 'graphql';
import type { EventRecord, PollListener } from './event-poller.js';

/** What a subscription's source yields: a record, or the error that ends it (its last payload). */
export type Delivery = { readonly record: EventRecord } | { readonly end: Error };

/** Options of {@link LiveFeed}. */
export interface FeedOptions {
  /** Records discovered at or before this moment (epoch ms) are not delivered. */
  from: number;
  /** The `since` the subscription asked for; null for none. */
  since: string | null;
  /** The most records it can still take (its budget left). */
  capacity(): number;
  /** Joins the feed to its poller; returns how to leave. */
  join(listener: PollListener): () => void;
  /**
   * Before each record: the error that ends the subscription instead (its budget or quota is
   * spent), or null to deliver it. Called again only once the previous payload was executed.
   */
  admit(): Promise<GraphQLError | null> | GraphQLError | null;
  /** Told of the workspace's credits left, from the poll that found the record. */
  remaining?(credits: number | null): void;
  /** Told once when the feed ends, however it ends. */
  onEnd?(): void;
  /** Ends the feed when it aborts (the client went away). */
  signal?: AbortSignal;
}

/** Records a slow subscriber may have waiting before the feed ends (bounds its memory). */
export const FEED_MAX_QUEUED = 10_000;

/**
 * One subscription's source of records: joined to its poller, it queues what the poller
 * delivers and yields one record per payload, oldest first, after `admit` allows it. It ends when
 * the client leaves (`return()`, or the signal), when `admit` refuses (that error is yielded
 * last), when the poller fails for good (likewise), or when {@link close} is called (shutdown).
 */
export class LiveFeed implements AsyncIterableIterator<Delivery> {
  readonly #options: FeedOptions;
  readonly #queue: EventRecord[] = [];
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
      deliver: (records, remaining) => {
        if (this.#done) return;
        options.remaining?.(remaining);
        for (const record of records) this.#queue.push(record);
        if (this.#queue.length - this.#head > FEED_MAX_QUEUED) {
          this.#finish(new Error('The subscriber reads too slowly: its queue is full.'));
        }
        this.#wake?.();
      },
      end: (error) => this.#finish(error),
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
      if (this.#head < this.#queue.length) {
        const refusal = await this.#options.admit();
        if (refusal) {
          this.#finish(refusal);
          continue;
        }
        if (this.#done && !this.#ending) continue;
        const record = this.#queue[this.#head]!;
        this.#queue[this.#head++] = undefined as unknown as EventRecord;
        if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
          this.#queue.splice(0, this.#head);
          this.#head = 0;
        }
        return { done: false, value: { record } };
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

  #finish(error: Error | undefined): void {
    if (this.#done) return;
    this.#done = true;
    this.#ending = error;
    this.#queue.length = 0;
    this.#head = 0;
    this.#options.signal?.removeEventListener('abort', this.#onAbort);
    this.#leave?.();
    this.#leave = undefined;
    this.#options.onEnd?.();
    this.#wake?.();
  }
}
