import { setTimeout as sleep } from 'node:timers/promises';
import type { RetryBudget } from '../retry-budget.js';
import type {
  UpstreamCall,
  UpstreamPage,
  UpstreamPolicy,
  UpstreamRequest,
} from '../upstream-call.js';
import { UpstreamError, unavailable } from '../upstream-error.js';
import type { UpstreamObserver } from '../upstream-observer.js';

/** The events of {@link retry}: `retry`, before each retry's wait, with its reason. */
export type RetryEvents = Pick<UpstreamObserver, 'retry'>;

/** Options of {@link retry}. */
export interface RetryOptions {
  /** Retries after a transient fault (`UPSTREAM_RETRIES`): 2 means up to 3 attempts. */
  retries: number;
  /** The longest `Retry-After` a 429 may ask for and still be waited out once (`RETRY_AFTER_MAX_MS`). */
  retryAfterMaxMs: number;
  /** Shared by every call: caps retries at a share of the requests. */
  budget: RetryBudget;
  /** First backoff ceiling, doubled each retry up to {@link maxDelayMs}. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** 0 ≤ x < 1; `Math.random` unless a test fixes it. */
  random?: () => number;
  /** Told of each retry, for logs and metrics. */
  events?: RetryEvents;
}

/**
 * Whether the operation's budget can take another attempt at the page besides the one that timed
 * out (which may have been charged its limit): never more than the budget.
 */
function roomForAnother(request: UpstreamRequest): boolean {
  return !request.budget || request.budget.available >= request.limit;
}

/** The longest backoff before a retry, unless the options say otherwise. */
const MAX_BACKOFF_MS = 1_000;

/**
 * The longest one call can take with its retries: every attempt to its timeout (a 429 waited out
 * adds one), every backoff at its longest, and the `Retry-After` waited. A claim on a page's fetch shared between instances
 * lasts that long, so that no other instance fetches (and pays for) the page meanwhile.
 */
export function callDurationBound(
  timeoutMs: number,
  { retries, retryAfterMaxMs }: Pick<RetryOptions, 'retries' | 'retryAfterMaxMs'>,
): number {
  return (retries + 2) * timeoutMs + retries * MAX_BACKOFF_MS + retryAfterMaxMs;
}

/**
 * Sends a GET again when that is safe and may help. Every upstream call is an idempotent GET, so:
 *
 * - a transient fault (connection refused or reset, a timeout, 500/502/503/504) is retried up to
 *   `retries` times, after an exponential backoff with full jitter (a uniform wait up to
 *   `baseDelayMs · 2^attempt`, at most `maxDelayMs`);
 * - a 429 whose `Retry-After` is at most `retryAfterMaxMs`, and ends before the operation's
 *   deadline, is waited out and retried once; another is answered at once (TOO_MANY_REQUESTS with
 *   `retryAfter`). The wait holds only this call: another key's calls go on;
 * - 400, 401, 402 and 403 are never retried, nor anything once the call is aborted;
 * - every retry needs the shared {@link RetryBudget}: when it is spent, the fault is answered.
 *
 * Each retry is booked in the call's ledger (`extensions.upstreamRetries`). Events: `retry`.
 */
export function retry(options: RetryOptions): UpstreamPolicy {
  const baseDelayMs = options.baseDelayMs ?? 25;
  const maxDelayMs = options.maxDelayMs ?? MAX_BACKOFF_MS;
  const random = options.random ?? Math.random;
  return (next) => (request) => {
    options.budget.request();
    // The first attempt alone, without a frame of its own: the loop runs only after a failure.
    return next(request).catch((error: unknown) => again(next, request, error));
  };

  /** The attempts after the first, which failed with `firstError`. */
  async function again(
    next: UpstreamCall,
    request: UpstreamRequest,
    firstError: unknown,
  ): Promise<UpstreamPage> {
    let error = firstError;
    let waitedOut429 = false;
    for (let attempt = 0; ; attempt++) {
      // What the attempt numbered `attempt` failed with decides whether another goes.
      if (!(error instanceof UpstreamError) || request.signal?.aborted) throw error;
      let delayMs: number;
      if (error.code === 'TOO_MANY_REQUESTS') {
        const askedMs = error.retryAfter === undefined ? Infinity : error.retryAfter * 1000;
        const pastDeadline =
          request.deadline !== undefined && Date.now() + askedMs >= request.deadline;
        if (waitedOut429 || askedMs > options.retryAfterMaxMs || pastDeadline) throw error;
        waitedOut429 = true;
        delayMs = askedMs;
      } else if (error.failure === 'timeout' && !roomForAnother(request)) {
        // The timed-out attempt may have been charged: another could overdraw the budget.
        throw error;
      } else if (error.retryable && attempt < options.retries) {
        delayMs = random() * Math.min(maxDelayMs, baseDelayMs * 2 ** attempt);
      } else {
        throw error;
      }
      if (!options.budget.tryRetry()) throw error;
      request.ledger.retried();
      const reason = error.status === undefined ? error.failure : String(error.status);
      options.events?.retry?.(reason);
      try {
        await sleep(delayMs, undefined, { signal: request.signal });
      } catch {
        throw unavailable('aborted', 'the request was aborted');
      }
      try {
        return await next(request);
      } catch (failure) {
        error = failure;
      }
    }
  }
}
