import { UpstreamError } from './upstream-error.js';

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

/**
 * The events of the circuit, for logs and metrics. Declared here and extended by
 * `UpstreamObserver`, rather than picked from the observer as a policy's events are: the states
 * are the circuit's, so the observer imports this module and not the reverse.
 */
export interface BreakerEvents {
  /** The circuit changed state. */
  breaker?(state: BreakerState): void;
}

/**
 * The service's circuit, one per gateway: the state the `breaker` policy keeps. What counts as a
 * failure is the policy's to say; the circuit counts them:
 *
 * - closed: calls go through; `failureThreshold` failures in a row open it;
 * - open: every call is refused at once, UPSTREAM_UNAVAILABLE with `retryAfter` (seconds until a
 *   probe may go), for `openMs`;
 * - half-open: one call goes through as a probe, the others are still refused; its success closes
 *   the circuit, its failure opens it again.
 */
export class CircuitBreaker {
  readonly #options: Required<BreakerOptions>;
  readonly #events: BreakerEvents;
  #state: BreakerState = 'closed';
  #failures = 0;
  #openedAt = 0;
  #probing = false;

  constructor(options: BreakerOptions, events: BreakerEvents = {}) {
    this.#options = { now: Date.now, ...options };
    this.#events = events;
  }

  get state(): BreakerState {
    if (this.#state === 'open' && this.#now() - this.#openedAt >= this.#options.openMs) {
      this.#set('half-open');
    }
    return this.#state;
  }

  /**
   * Lets a call through, or throws the refusal while open or while a probe is out. Returns true
   * when the call is the half-open probe: call {@link probed} once it has settled.
   */
  admit(): boolean {
    const state = this.state;
    if (state === 'open' || (state === 'half-open' && this.#probing)) throw this.#refusal();
    if (state === 'half-open') this.#probing = true;
    return state === 'half-open';
  }

  /** The probe let through by {@link admit} has settled (after its success or failure). */
  probed(): void {
    this.#probing = false;
  }

  /** A call the service answered: the run of failures ends, and the circuit closes. */
  succeeded(): void {
    this.#failures = 0;
    if (this.#state !== 'closed') this.#set('closed');
  }

  /** A failure of the service: the threshold in a row, or a failed probe, opens the circuit. */
  failed(): void {
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
    this.#events.breaker?.(state);
  }

  #now(): number {
    return this.#options.now();
  }
}
