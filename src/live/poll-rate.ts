/** The first pause after a 429 that gives no `Retry-After`; each next one in a row doubles it. */
export const FIRST_PAUSE_MS = 1_000;
/** The longest pause after 429s without `Retry-After`. */
export const MAX_PAUSE_MS = 5 * 60_000;

/** Options of {@link PollRate}. */
export interface PollRateOptions {
  /** Requests per second the polls of one key may send (`POLL_REQUESTS_PER_SECOND`). */
  perSecond: number;
}

/** A request waiting for its turn. */
interface Waiter {
  resolve(): void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

/** One key's turns. */
interface KeyTurns {
  /** When the next request may go (ms since the epoch). */
  next: number;
  /** No request goes before then (ms since the epoch): a 429's pause. */
  until: number;
  /** The last pause of a 429 without `Retry-After`, doubled by the next in a row; 0 once answered. */
  pauseMs: number;
  readonly queue: Waiter[];
  timer?: NodeJS.Timeout;
}

/**
 * The pace of one instance's polls, per upstream key: each page request a poll or a catch-up sends
 * waits for its turn, one every `1 / perSecond` s per key, first come first served, without
 * bursts. More pollers of a key then poll less often, rather than pile requests on the key's rate
 * limit, and the rest of that limit is left to the key's queries. A 429 pauses every turn of the
 * key for its `Retry-After` (without one: 1 s, doubled by each 429 in a row, at most 5 minutes),
 * then the turns resume. A key's state is dropped once it is idle.
 */
export class PollRate {
  readonly #spacingMs: number;
  readonly #keys = new Map<string, KeyTurns>();

  constructor(options: PollRateOptions) {
    this.#spacingMs = 1000 / options.perSecond;
  }

  /**
   * Resolves when a request with `key` may be sent; rejects with the signal's reason when it
   * aborts first (its turn goes to the next).
   */
  turn(key: string, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const turns = this.#turns(key);
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { resolve };
      if (signal) {
        waiter.signal = signal;
        waiter.onAbort = () => {
          const at = turns.queue.indexOf(waiter);
          if (at >= 0) turns.queue.splice(at, 1);
          reject(signal.reason);
          this.#drain(key, turns);
        };
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      turns.queue.push(waiter);
      this.#drain(key, turns);
    });
  }

  /**
   * A request with `key` got a 429: no turn of the key comes for `retryAfter` seconds, or, without
   * it, for a pause that doubles with each 429 in a row. A 429 during the pause (a request sent
   * before it) does not lengthen it. Returns how long the key now waits, in ms.
   */
  tooManyRequests(key: string, retryAfter: number | undefined): number {
    const turns = this.#turns(key);
    const now = Date.now();
    let pauseMs = 0;
    if (retryAfter !== undefined) pauseMs = retryAfter * 1000;
    else if (now >= turns.until) {
      turns.pauseMs =
        turns.pauseMs === 0 ? FIRST_PAUSE_MS : Math.min(turns.pauseMs * 2, MAX_PAUSE_MS);
      pauseMs = turns.pauseMs;
    }
    turns.until = Math.max(turns.until, now + pauseMs);
    this.#drain(key, turns);
    return turns.until - now;
  }

  /** A request with `key` was answered: the next 429 without `Retry-After` pauses 1 s again. */
  answered(key: string): void {
    const turns = this.#keys.get(key);
    if (turns) turns.pauseMs = 0;
  }

  /** How many keys have state (waiters, a pace or a pause to keep). */
  get keys(): number {
    return this.#keys.size;
  }

  #turns(key: string): KeyTurns {
    let turns = this.#keys.get(key);
    if (!turns) this.#keys.set(key, (turns = { next: 0, until: 0, pauseMs: 0, queue: [] }));
    return turns;
  }

  /** Gives the turns that are due, then waits for the next one, or drops the idle key. */
  #drain(key: string, turns: KeyTurns): void {
    clearTimeout(turns.timer);
    turns.timer = undefined;
    const now = Date.now();
    while (turns.queue.length > 0) {
      const at = Math.max(turns.next, turns.until);
      if (at > now) {
        this.#wake(key, turns, at - now);
        return;
      }
      const waiter = turns.queue.shift()!;
      if (waiter.onAbort) waiter.signal?.removeEventListener('abort', waiter.onAbort);
      // From now, not from the previous turn: turns not taken do not add up to a burst.
      turns.next = now + this.#spacingMs;
      waiter.resolve();
    }
    // Kept while its pace or pause holds, and as long again after a pause: a 429 then is in a row.
    const idleAt = Math.max(turns.next, turns.until + turns.pauseMs);
    if (idleAt <= now) this.#keys.delete(key);
    else this.#wake(key, turns, idleAt - now);
  }

  #wake(key: string, turns: KeyTurns, delayMs: number): void {
    turns.timer = setTimeout(() => this.#drain(key, turns), delayMs);
    turns.timer.unref();
  }
}
