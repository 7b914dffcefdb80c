import { DelayedError, Queue, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import type { Delivery } from './alert-store.js';
import type { AttemptResult } from './attempt-delivery.js';
import type { DeliveryQueue } from './delivery-queue.js';
import type { RedisAlertStore } from './redis-alert-store.js';

/** Options of {@link RedisDeliveryQueue}. */
export interface RedisDeliveryQueueOptions {
  /** `REDIS_URL`: BullMQ holds connections of its own (its worker blocks on one). */
  url: string;
  /** The deployment's key prefix (BullMQ's `prefix`). */
  prefix: string;
  store: RedisAlertStore;
  attempt(delivery: Delivery): Promise<AttemptResult>;
  /** Attempts in flight at once on this instance. */
  concurrency: number;
  /** How long a job is this instance's without renewal: past it (the process died), another takes it. */
  lockMs: number;
  onError(message: string): void;
}

/** How often the pending deliveries are compared with the queue's jobs, and the depth read. */
const REPAIR_MS = 30_000;
/** How long closing waits for the attempts in flight and BullMQ's own closing. */
const CLOSE_MS = 2_000;
/** Pending deliveries one repair looks at. */
const REPAIR_BATCH = 1_000;

/**
 * The delivery queue shared by every instance through Redis, on BullMQ: one job per pending
 * delivery, named by the delivery's id (so adding it twice adds it once), delayed until it is due;
 * BullMQ gives each job to one worker at a time, under a lock the worker renews. A job's attempt
 * that calls for a retry moves it back to delayed (same job, same `webhook-id`); a worker that
 * dies mid-attempt loses its lock and the job is taken again by another (a delivery sent twice
 * only then). The store is the truth: a job whose delivery is no longer pending does nothing,
 * and a repair pass adds the job of any pending delivery that has none (a crash between writing
 * a delivery and adding its job, Redis failing at that moment).
 */
export class RedisDeliveryQueue implements DeliveryQueue {
  readonly #options: RedisDeliveryQueueOptions;
  readonly #connection: Redis;
  /** The worker's own connection (it blocks on it); ours to close, as the queue's is. */
  readonly #workerConnection: Redis;
  readonly #queue: Queue;
  #worker: Worker | undefined;
  #timer: NodeJS.Timeout | undefined;
  #depth = 0;

  constructor(options: RedisDeliveryQueueOptions) {
    this.#options = options;
    // BullMQ's own rule for its connections: commands wait for a reconnection, not fail after N.
    this.#connection = new Redis(options.url, { maxRetriesPerRequest: null });
    this.#connection.on('error', () => undefined);
    this.#workerConnection = this.#connection.duplicate();
    this.#workerConnection.on('error', () => undefined);
    this.#queue = new Queue('alert-deliveries', {
      connection: this.#connection,
      prefix: options.prefix,
    });
    this.#queue.on('error', () => undefined);
  }

  start(): void {
    this.#worker = new Worker(
      'alert-deliveries',
      (job: Job<{ id: string }>, token?: string) => this.#process(job, token),
      {
        connection: this.#workerConnection,
        prefix: this.#options.prefix,
        concurrency: this.#options.concurrency,
        lockDuration: this.#options.lockMs,
        // A job taken again after its worker died is a delivery's retry, not a poison job.
        maxStalledCount: 1_000_000,
        removeOnComplete: { count: 0 },
        removeOnFail: { count: 0 },
      },
    );
    this.#worker.on('error', (error) =>
      this.#options.onError(`alerts: the delivery queue failed (${error.message})`),
    );
    this.#timer = setInterval(() => void this.#repair(), REPAIR_MS);
    this.#timer.unref();
    void this.#repair();
  }

  added(delivery: Pick<Delivery, 'id' | 'nextAttemptAt'>): void {
    this.#add(delivery.id, delivery.nextAttemptAt ?? Date.now()).catch((error: unknown) =>
      this.#options.onError(
        `alerts: a delivery's job was not added (${(error as Error).message}); the next repair adds it`,
      ),
    );
  }

  depth(): number {
    return this.#depth;
  }

  /**
   * Stops taking jobs: attempts in flight get {@link CLOSE_MS} to end (one that does not is
   * taken again by another instance once its lock lapses, with the same `webhook-id`); then the
   * connections close, answered or not (Redis may be unreachable).
   */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    const closing = Promise.allSettled([this.#worker?.close(), this.#queue.close()]);
    await Promise.race([closing, new Promise((resolve) => setTimeout(resolve, CLOSE_MS).unref())]);
    this.#workerConnection.disconnect();
    this.#connection.disconnect();
  }

  async #add(id: string, at: number): Promise<void> {
    const delay = Math.max(0, at - Date.now());
    await this.#queue.add(
      'deliver',
      { id },
      { jobId: id, delay, removeOnComplete: true, removeOnFail: true },
    );
  }

  async #process(job: Job<{ id: string }>, token: string | undefined): Promise<void> {
    const delivery = await this.#options.store.getDelivery(job.data.id);
    if (!delivery || delivery.status !== 'pending') return;
    const due = delivery.nextAttemptAt ?? 0;
    if (due > Date.now() + 50) return this.#later(job, due, token);
    const result = await this.#options.attempt(delivery);
    this.#depth = await this.#options.store.depth().catch(() => this.#depth);
    if (result.outcome === 'retry' || result.outcome === 'held') {
      return this.#later(job, result.at, token);
    }
  }

  /** Moves `job` back to delayed until `at` (BullMQ's way: then throw `DelayedError`). */
  async #later(job: Job, at: number, token: string | undefined): Promise<never> {
    await job.moveToDelayed(at, token);
    throw new DelayedError();
  }

  /** Adds the job of every pending delivery (those there are left as they are); reads the depth. */
  async #repair(): Promise<void> {
    try {
      const { store } = this.#options;
      this.#depth = await store.depth();
      for (const { id, at } of await store.pending(REPAIR_BATCH)) await this.#add(id, at);
    } catch (error) {
      this.#options.onError(
        `alerts: the delivery queue's repair failed (${(error as Error).message})`,
      );
    }
  }
}
