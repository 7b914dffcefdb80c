/**
 * The credits one GraphQL operation may still spend: the hard stop at its budget. Each
 * upstream page reserves its `limit` before it is sent (cut to what is left) and settles to what
 * the service charged when it returns, so that concurrent pages never overdraw it together.
 * Made per operation; unlimited until {@link set} is called.
 */
export class CreditBudget {
  /** The credits the request allows (its `X-Credit-Budget`, or the default); null until set. */
  budget: number | null = null;
  /** The credits the operation was expected to cost, estimated before it ran; null until set. */
  estimate: number | null = null;
  #limit = Infinity;
  /** Credits charged so far plus those reserved by pages in flight. */
  #committed = 0;
  /** Credits taken from the caller's quota for this operation; unlimited without a quota. */
  #backed = Infinity;
  /** Takes more from the caller's quota (all or nothing); absent without a quota. */
  #extend: ((credits: number) => Promise<boolean>) | undefined;

  /** True when the operation draws on a quota: pages may first {@link ensure} it backs them. */
  get backed(): boolean {
    return this.#extend !== undefined;
  }

  /** The most this operation may spend in all. */
  get limit(): number {
    return this.#limit;
  }

  /** Credits neither charged nor reserved, within the budget and what the quota backs. */
  get available(): number {
    return Math.max(0, Math.min(this.#limit, this.#backed) - this.#committed);
  }

  /**
   * Draws the operation on a quota: `credits` already taken from it, `extend` to take more. Then
   * the operation spends no more than its quota backs: a page that would go past it first takes
   * the difference ({@link ensure}), and is cut to what is backed when the quota refuses.
   */
  backBy(credits: number, extend: (credits: number) => Promise<boolean>): void {
    this.#backed = credits;
    this.#extend = extend;
  }

  /**
   * Before a page of up to `limit` records is reserved: takes from the quota what the page would
   * spend beyond what it backs, if the budget allows the page that far.
   */
  async ensure(limit: number): Promise<void> {
    if (!this.#extend) return;
    const wanted = Math.min(limit, this.#limit - this.#committed);
    const short = this.#committed + wanted - this.#backed;
    if (short > 0 && (await this.#extend(short))) this.#backed += short;
  }

  /**
   * Records the operation's budget and estimate; it may then spend up to its budget, never more.
   * The estimate assumes typical sizes where the service bounds none, so an operation may cost
   * more than it (a round with many investors) or less: the budget, not the estimate, is the stop.
   */
  set(budget: number, estimate: number): void {
    this.budget = budget;
    this.estimate = estimate;
    this.#limit = budget;
  }

  /**
   * Reserves credits for a page of up to `limit` records whose first `skip` the caller drops:
   * returns the limit to ask for, cut to the credits available, or 0 when what is left would not
   * reach past `skip` (a page that would be paid for and thrown away is not sent).
   */
  reserve(limit: number, skip = 0): number {
    const granted = Math.min(limit, this.available);
    if (granted <= skip) return 0;
    this.#committed += granted;
    return granted;
  }

  /** Settles a reservation of `reserved` credits to the `charged` ones (0 when the page failed). */
  settle(reserved: number, charged: number): void {
    this.#committed += charged - reserved;
  }
}
