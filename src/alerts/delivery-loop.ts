import type { Delivery } from './alert-store.js';
import type { AttemptResult } from './attempt-delivery.js';
import type { DeliveryQueue } from './delivery-queue.js';

/** The queue of due deliveries the loop reads: the embedded store's. */
export interface DueDeliveries {
  claimDue(now: number, limit: number, leaseMs: number): Delivery[];
  nextDue(): number | null;
  pending(): number;
}

/** Options of {@link DeliveryLoop}. */
export interface DeliveryLoopOptions {
  queue: DueDeliveries;
  attempt(delivery: Delivery): Promise<AttemptResult>;
  /** Attempts in flight at once. */
  concurrency: number;
  /** How long a claimed delivery is this loop's: past it (the process died), it is due again. */
  leaseMs: number;
  /** Told of an attempt that threw (a bug, or the store failing): it is due again after its lease. */
  onError?(error: unknown): void;
}

/** The longest the loop sleeps without looking (a delivery made by another writer, a clock jump). */
const IDLE_MS = 5_000;

/**
 * The embedded delivery queue's worker (without Redis; with it, the queue is BullMQ's): it takes
 * the due deliveries from the store, a few at a time, attempts them, and sleeps until the next
 * is due or it is woken (a delivery added). A claimed delivery whose process died while sending
 * it is due again once its claim lapses, with the same `webhook-id`.
 */
export class DeliveryLoop implements DeliveryQueue {
  readonly #options: DeliveryLoopOptions;
  #inFlight = 0;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  #looking = false;
  readonly #settled = new Set<Promise<unknown>>();

  constructor(options: DeliveryLoopOptions) {
    this.#options = options;
  }

  start(): void {
    this.wake();
  }

  /** Looks for due deliveries now. */
  wake(): void {
    if (this.#closed || this.#looking) return;
    this.#looking = true;
    try {
      this.#take();
    } finally {
      this.#looking = false;
    }
    this.#sleep();
  }

  added(): void {
    this.wake();
  }

  depth(): number {
    return this.#options.queue.pending();
  }

  /** Stops taking deliveries; resolves once the attempts in flight are done. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    await Promise.allSettled([...this.#settled]);
  }

  #take(): void {
    const free = this.#options.concurrency - this.#inFlight;
    if (free <= 0) return;
    const due = this.#options.queue.claimDue(Date.now(), free, this.#options.leaseMs);
    for (const delivery of due) {
      this.#inFlight += 1;
      const attempt = this.#options
        .attempt(delivery)
        .catch((error: unknown) => this.#options.onError?.(error))
        .finally(() => {
          this.#inFlight -= 1;
          this.#settled.delete(attempt);
          this.wake();
        });
      this.#settled.add(attempt);
    }
  }

  #sleep(): void {
    if (this.#closed) return;
    clearTimeout(this.#timer);
    const next = this.#options.queue.nextDue();
    const delay = next === null ? IDLE_MS : Math.min(Math.max(0, next - Date.now()), IDLE_MS);
    this.#timer = setTimeout(() => this.wake(), Math.max(delay, 10));
    this.#timer.unref();
  }
}
