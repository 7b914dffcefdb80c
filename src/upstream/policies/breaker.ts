import type { UpstreamPolicy } from '../upstream-call.js';
import { UpstreamError } from '../upstream-error.js';

/** Options of {@link CircuitBreaker}. */
export interface BreakerOptions {
  /** Failures of the service in a row that open the circuit. */
  failureThreshold: number;
  /** How long it stays open before a probe may go (half-open). */
  openMs: number;
  /** The clock; `Date.now` unless a test moves it. */
  now?: () => number;
}

export type BreakerState = 'closed' | 'open' | 'half-open';

/** What the breaker tells on each change of state, for logs and metrics. */
export type BreakerListener = (state: BreakerState) => void;

/**
 * The service's circuit breaker, one per gateway. A failure of the service (no answer in time, a
 * refused or reset connection, a 5xx, a malformed body) counts; an answer that is the caller's
 * (400, 401, 402, 403, 429) or a call its client aborted does not, and any success resets the run.
 *
 * - closed: calls go through; `failureThreshold` failures in a row open it;
 * - open: every call fails at once, UPSTREAM_UNAVAILABLE with `retryAfter` (seconds until a probe
 *   may go), sending nothing, for `openMs`;
 * - half-open: one call goes through as a probe, the others still fail fast; its success closes
 *   the circuit, its failure opens it again.
 */
export class CircuitBreaker {
  readonly #options: Required<BreakerOptions>;
  readonly #listeners: BreakerListener[] = [];
  #state: BreakerState = 'closed';
  #failures = 0;
  #openedAt = 0;
  #probing = false;

  constructor(options: BreakerOptions) {
    this.#options = { now: Date.now, ...options };
  }

  get state(): BreakerState {
    if (this.#state === 'open' && this.#now() - this.#openedAt >= this.#options.openMs) {
      this.#set('half-open');
    }
    return this.#state;
  }

  onChange(listener: BreakerListener): void {
    this.#listeners.push(listener);
  }

  /** The policy: wraps the transport, so that it sees every attempt the retry policy makes. */
  readonly policy: UpstreamPolicy = (next) => async (request) => {
    const state = this.state;
    if (state === 'open' || (state === 'half-open' && this.#probing)) throw this.#refusal();
    const probe = state === 'half-open';
    if (probe) this.#probing = true;
    try {
      const page = await next(request);
      this.#succeeded();
      return page;
    } catch (error) {
      // A call its client aborted tells nothing of the service.
      const aborted =
        request.signal?.aborted || (error instanceof UpstreamError && error.failure === 'aborted');
      if (!aborted) {
        if (isServiceFailure(error)) this.#failed();
        else this.#succeeded();
      }
      throw error;
    } finally {
      if (probe) this.#probing = false;
    }
  };

  #succeeded(): void {
    this.#failures = 0;
    if (this.#state !== 'closed') this.#set('closed');
  }

  #failed(): void {
    this.#failures++;
    if (this.#state === 'half-open' || this.#failures >= this.#options.failureThreshold) {
      this.#openedAt = this.#now();
      if (this.#state !== 'open') this.#set('open');
    }
  }

  #refusal(): UpstreamError {
    const leftMs = Math.max(0, this.#options.openMs - (this.#now() - this.#openedAt));
    return new UpstreamError(
      `The Business-Signals API is unavailable: it failed ${this.#options.failureThreshold} times in a row, so the gateway stopped sending it requests for a while (circuit open). Retry after the time given.`,
      {
        code: 'UPSTREAM_UNAVAILABLE',
        failure: 'open-circuit',
        retryAfter: Math.ceil(leftMs / 1000) || 1,
      },
    );
  }

  #set(state: BreakerState): void {
    this.#state = state;
    for (const listener of this.#listeners) listener(state);
  }

  #now(): number {
    return this.#options.now();
  }
}

/** A failure that says the service is unwell, rather than the caller or the client. */
function isServiceFailure(error: unknown): boolean {
  if (!(error instanceof UpstreamError)) return false;
  if (error.failure === 'malformed') return true;
  return error.retryable;
}
