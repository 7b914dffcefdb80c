/** Options of {@link RetryBudget}. */
export interface RetryBudgetOptions {
  /** Retries allowed as a share of the first attempts in the window (0.2: 20%). */
  ratio: number;
  /** Retries always allowed in a window, however few the requests (a quiet gateway still retries). */
  minRetries: number;
  /** The sliding window, in ms (split in ten buckets). */
  windowMs: number;
}

/**
 * The gateway's retry budget: retries at most 20% of the first attempts over 10 s, and 10 per 10 s
 * however few the requests. With every request failing, the service then gets at most 1.2
 * requests per call (plus the 10).
 */
export const RETRY_BUDGET: RetryBudgetOptions = { ratio: 0.2, minRetries: 10, windowMs: 10_000 };

const BUCKETS = 10;

/**
 * Caps retries at a share of the requests, over a sliding window, as Envoy's and Finagle's retry
 * budgets do: when the service fails everything, retries add at most `ratio` to the load it gets
 * (plus `minRetries` per window), instead of multiplying it. Shared by every operation of the
 * gateway; not per caller, since the service's health is one.
 */
export class RetryBudget {
  readonly #options: RetryBudgetOptions;
  readonly #bucketMs: number;
  readonly #requests = new Array<number>(BUCKETS).fill(0);
  readonly #retries = new Array<number>(BUCKETS).fill(0);
  /** The bucket (time / bucketMs) the counters were last moved to. */
  #current = 0;

  constructor(options: RetryBudgetOptions) {
    this.#options = options;
    this.#bucketMs = options.windowMs / BUCKETS;
  }

  /** Counts a first attempt: it earns `ratio` of a retry. */
  request(now = Date.now()): void {
    this.#requests[this.#advance(now)]!++;
  }

  /** Takes a retry from the budget: false when the window's retries are spent. */
  tryRetry(now = Date.now()): boolean {
    const slot = this.#advance(now);
    const requests = sum(this.#requests);
    const retries = sum(this.#retries);
    const allowed = Math.max(this.#options.minRetries, this.#options.ratio * requests);
    if (retries + 1 > allowed) return false;
    this.#retries[slot]!++;
    return true;
  }

  /** Moves the window to `now`, clearing the buckets it left; returns the current one. */
  #advance(now: number): number {
    const bucket = Math.floor(now / this.#bucketMs);
    const steps = Math.min(bucket - this.#current, BUCKETS);
    for (let step = 1; step <= steps; step++) {
      const slot = (this.#current + step) % BUCKETS;
      this.#requests[slot] = 0;
      this.#retries[slot] = 0;
    }
    if (bucket > this.#current) this.#current = bucket;
    return this.#current % BUCKETS;
  }
}

function sum(counts: number[]): number {
  let total = 0;
  for (const count of counts) total += count;
  return total;
}
