import type { EndpointName } from '../upstream/endpoints.js';

/** The part of a success envelope the ledger reads. */
export interface ChargedPage {
  data: readonly unknown[];
  meta: { creditsUsed?: unknown; creditsRemaining?: unknown };
}

/** What a page was charged: the service's `meta.creditsUsed`, else one credit per record. */
export function creditsOf(page: ChargedPage): number {
  const used = page.meta.creditsUsed;
  return typeof used === 'number' ? used : page.data.length;
}

/**
 * Whether a balance `remaining` reported by a response sent at `at` is fresher than the one known
 * (`known`, sent at `knownAt`; null for none): a later response wins; of two at the same moment,
 * the lower (the service counts down, so it was answered later).
 */
export function isFresher(
  remaining: number,
  at: number,
  known: number | null,
  knownAt: number,
): boolean {
  return known === null || at > knownAt || (at === knownAt && remaining < known);
}

/** A page served past its TTL because the service was down (`policies/stale.ts`). */
export interface StaleServed {
  readonly endpoint: EndpointName;
  /** How long ago the service sent it. */
  readonly ageMs: number;
}

/**
 * What one GraphQL operation has cost upstream, reported in `extensions`. Booked by the `ledger`
 * policy as requests leave and responses arrive, by `retry` for each retry, and by the cache, the
 * coalescing and the stale fallback for the pages they served without a request. A child ledger (`new CreditLedger(parent)`) books into its parent as
 * well, so that one call's own charge can be read apart from the operation's.
 */
export class CreditLedger {
  /** Upstream HTTP requests actually sent, successful or not. */
  requests = 0;
  /** Of those, the ones sent again after a transient fault or a short 429. */
  retries = 0;
  /** Credits the service charged for the responses actually received. */
  used = 0;
  /** Credits the pages served from the cache or a joined request would have cost. */
  saved = 0;
  /**
   * Credits the service may have charged without the gateway knowing: an attempt that timed out,
   * or was given up once sent, may have been answered (and charged) after the gateway stopped
   * waiting, up to its `limit`.
   */
  uncertain = 0;
  /** The pages served past their TTL in place of a failed request, in the order served. */
  readonly stale: StaleServed[] = [];
  /** The workspace's credits left, from the freshest response seen; null before any. */
  remaining: number | null = null;
  /** When the response `remaining` comes from was received (ms since the epoch). */
  #remainingAt = -Infinity;
  #oldestPageAt = Infinity;
  readonly #parent: CreditLedger | undefined;

  constructor(parent?: CreditLedger) {
    this.#parent = parent;
  }

  /** Books a request as it is sent. */
  sent(): void {
    this.requests++;
    this.#parent?.sent();
  }

  /** Books an attempt that timed out: up to `limit` credits the service may have charged. */
  mayHaveCharged(limit: number): void {
    this.uncertain += limit;
    this.#parent?.mayHaveCharged(limit);
  }

  /** Books a retry, before it is sent (it is booked as a request too, when it leaves). */
  retried(): void {
    this.retries++;
    this.#parent?.retried();
  }

  /** Books a success envelope as it arrives from the service. */
  charged(page: ChargedPage): void {
    this.used += creditsOf(page);
    const now = Date.now();
    this.#oldestPageAt = Math.min(this.#oldestPageAt, now);
    this.#observe(page.meta.creditsRemaining, now);
    this.#parent?.charged(page);
  }

  /**
   * Books a page served without a request: from the cache (`receivedAt` is when the service sent
   * it) or by joining another operation's request. Its credits count as saved.
   */
  served(page: ChargedPage, receivedAt: number): void {
    this.saved += creditsOf(page);
    this.#oldestPageAt = Math.min(this.#oldestPageAt, receivedAt);
    this.#observe(page.meta.creditsRemaining, receivedAt);
    this.#parent?.served(page, receivedAt);
  }

  /** Books a page served past its TTL (it is booked as `served` too). */
  servedStale(page: StaleServed): void {
    this.stale.push(page);
    this.#parent?.servedStale(page);
  }

  /**
   * When the oldest page this operation used was sent by the service (ms since the epoch): its
   * answer is as fresh as that page. Infinity before any page.
   */
  get oldestPageAt(): number {
    return this.#oldestPageAt;
  }

  /** When the response `remaining` comes from was received; -Infinity before any. */
  get remainingAt(): number {
    return this.#remainingAt;
  }

  /**
   * Keeps the freshest `remaining`: a later response wins; of two at the same moment, the
   * lower (the service counts down, so it was answered later).
   */
  #observe(remaining: unknown, at: number): void {
    if (typeof remaining !== 'number') return;
    if (isFresher(remaining, at, this.remaining, this.#remainingAt)) {
      this.remaining = remaining;
      this.#remainingAt = at;
    }
  }
}
