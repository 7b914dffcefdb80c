import { createPrng, type Prng } from './dataset/prng.js';

/** The share (0..1) of /v1 requests that get each fault. */
export interface FaultShares {
  serverError?: number;
  drop?: number;
  malformed?: number;
  tooManyRequests?: number;
}

/**
 * One scripted answer to a coming /v1 request, served before any drawn by the shares, in order:
 * a 5xx (`status`, default 500), a 429 with `Retry-After: retryAfter` (default 1 s), a hang (the
 * request is held `ms`, then its connection dropped), a dropped connection, or a malformed body.
 * None is charged.
 */
export type ScriptedFault =
  | { kind: 'serverError'; status?: 500 | 502 | 503 | 504 }
  | { kind: 'tooManyRequests'; retryAfter?: number }
  | { kind: 'hang'; ms: number }
  | { kind: 'drop' }
  | { kind: 'malformed' };

/** Added response delay: `fixedMs` plus a uniform draw in [0, jitterMs). */
export interface Latency {
  fixedMs?: number;
  jitterMs?: number;
}

const KINDS = ['serverError', 'drop', 'malformed', 'tooManyRequests'] as const;

function checkShare(name: string, value: number | undefined): number {
  const share = value ?? 0;
  if (!Number.isFinite(share) || share < 0 || share > 1)
    throw new RangeError(`${name} must be a share between 0 and 1`);
  return share;
}

function checkMs(name: string, value: number | undefined): number {
  const ms = value ?? 0;
  if (!Number.isFinite(ms) || ms < 0)
    throw new RangeError(`${name} must be a number of milliseconds >= 0`);
  return ms;
}

/**
 * Fault and latency settings, drawing from a seeded generator so that a run
 * with the same seed and request sequence gets the same faults.
 */
export class FaultInjector {
  readonly #seed: number;
  readonly #baseLatency: Required<Latency>;
  #prng: Prng;
  #shares: Required<FaultShares> = { serverError: 0, drop: 0, malformed: 0, tooManyRequests: 0 };
  #latency: Required<Latency>;
  #script: ScriptedFault[] = [];

  constructor(seed: number, latency: Latency = {}) {
    this.#seed = seed;
    this.#baseLatency = {
      fixedMs: checkMs('fixedMs', latency.fixedMs),
      jitterMs: checkMs('jitterMs', latency.jitterMs),
    };
    this.#latency = { ...this.#baseLatency };
    this.#prng = createPrng(seed, 'faults');
  }

  /**
   * Replaces the fault shares (omitted kinds become 0).
   *
   * @throws RangeError when a share is outside 0..1 or the shares add up to more than 1.
   */
  setFaults(shares: FaultShares): void {
    const next = {
      serverError: checkShare('serverError', shares.serverError),
      drop: checkShare('drop', shares.drop),
      malformed: checkShare('malformed', shares.malformed),
      tooManyRequests: checkShare('tooManyRequests', shares.tooManyRequests),
    };
    if (next.serverError + next.drop + next.malformed + next.tooManyRequests > 1 + 1e-9) {
      throw new RangeError('fault shares must add up to at most 1');
    }
    this.#shares = next;
  }

  /**
   * Replaces the added latency (omitted fields become 0).
   *
   * @throws RangeError for negative or non-finite values.
   */
  setLatency(latency: Latency): void {
    this.#latency = {
      fixedMs: checkMs('fixedMs', latency.fixedMs),
      jitterMs: checkMs('jitterMs', latency.jitterMs),
    };
  }

  /** Queues `faults` for the coming /v1 requests, one each, in order (after any queued). */
  script(faults: readonly ScriptedFault[]): void {
    for (const fault of faults) {
      if (fault.kind === 'hang') checkMs('ms', fault.ms);
      this.#script.push({ ...fault });
    }
  }

  /** The fault for the next /v1 request, or null: the next scripted one, else one drawn. */
  drawFault(): ScriptedFault | null {
    const scripted = this.#script.shift();
    if (scripted) return scripted;
    const s = this.#shares;
    if (s.serverError + s.drop + s.malformed + s.tooManyRequests === 0) return null;
    let r = this.#prng.next();
    for (const kind of KINDS) {
      r -= s[kind as keyof FaultShares];
      if (r < 0) return { kind };
    }
    return null;
  }

  /** Milliseconds to wait before answering the next /v1 request. */
  drawDelay(): number {
    const { fixedMs, jitterMs } = this.#latency;
    return jitterMs > 0 ? fixedMs + this.#prng.next() * jitterMs : fixedMs;
  }

  /** No faults (none scripted), latency back to the start options, generator re-seeded. */
  reset(): void {
    this.#script = [];
    this.#shares = { serverError: 0, drop: 0, malformed: 0, tooManyRequests: 0 };
    this.#latency = { ...this.#baseLatency };
    this.#prng = createPrng(this.#seed, 'faults');
  }
}
