/**
 * What one GraphQL operation has cost upstream, reported in `extensions`. Booked by the transport
 * as requests leave and responses arrive, so that a page served without a request (deduped
 * within the operation today; cached or joined later) books nothing.
 */
export class CreditLedger {
  /** Upstream HTTP requests actually sent, successful or not. */
  requests = 0;
  /** Sum of `meta.creditsUsed` over the responses actually received. */
  used = 0;
  /** Lowest `meta.creditsRemaining` seen, or null when no response was received. */
  remaining: number | null = null;

  /** Books a request as it is sent. */
  sent(): void {
    this.requests++;
  }

  /** Books the `meta` of a success envelope as it arrives. */
  charged(meta: { creditsUsed?: unknown; creditsRemaining?: unknown }): void {
    if (typeof meta.creditsUsed === 'number') this.used += meta.creditsUsed;
    const remaining = meta.creditsRemaining;
    if (typeof remaining === 'number') {
      this.remaining = this.remaining === null ? remaining : Math.min(this.remaining, remaining);
    }
  }
}
