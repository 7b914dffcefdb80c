import type { GraphQLError } from 'graphql';
import { ErrorCode, gatewayError } from '../errors.js';
import { restoreRate, type CreditQuota } from './quota/credit-quota.js';
import type {
  QuotaAnswer,
  QuotaObserver,
  QuotaPartAnswer,
  QuotaStore,
  QuotaTicket,
} from './quota/quota-store.js';
import { secondsUntil } from './quota/token-bucket.js';

/** Where a gateway's quota buckets live, and who hears of them. */
export interface Quotas {
  store: QuotaStore;
  observer: QuotaObserver;
}

/** What `extensions.credits.quota` and the `RateLimit` headers report of a principal's bucket. */
export interface QuotaReport {
  /** The bucket's size: the quota's credits. */
  limit: number;
  /** Credits left, after this operation (settled once it ended). */
  remaining: number;
  /** Credits given back per second. */
  restoreRate: number;
  /** The quota's window, in seconds. */
  windowSeconds: number;
}

/** The bucket of `quota` as it is reported, `credits` being what it holds. */
export function quotaReport(quota: CreditQuota, credits: number): QuotaReport {
  return {
    limit: quota.credits,
    remaining: Math.max(0, Math.floor(credits)),
    restoreRate: restoreRate(quota),
    windowSeconds: quota.windowSeconds,
  };
}

/** CREDIT_QUOTA_EXCEEDED for `estimate` when the bucket holds `credits`, with `Retry-After`. */
export function quotaRefusal(quota: CreditQuota, estimate: number, credits: number): GraphQLError {
  const available = Math.max(0, Math.floor(credits));
  const retryAfter = secondsUntil(quota, credits, Math.max(estimate, 1));
  const per = `${quota.credits} credits per ${quota.windowSeconds} s`;
  const error = gatewayError(
    ErrorCode.CREDIT_QUOTA_EXCEEDED,
    retryAfter === null
      ? `This operation is estimated at ${estimate} credits, more than your whole quota of ${per}: it can never run. Ask for fewer records (a smaller "first", fewer aliases or less nesting).`
      : `This operation is estimated at ${estimate} credits and your quota has ${available} left (${per}): retry in ${retryAfter} s, or ask for fewer records.`,
    { estimate, available, limit: quota.credits, retryAfter: retryAfter ?? undefined },
  );
  if (retryAfter !== null) {
    (error.extensions['http'] as { headers?: object }).headers = {
      'Retry-After': String(retryAfter),
    };
  }
  return error;
}

type MaybePromise<T> = T | Promise<T>;

/**
 * What one operation (or one subscription payload, or a subscription's catch-up) holds of its
 * principal's bucket: taken before anything is fetched, extended when a page would spend past
 * it, settled once to what was charged (the rest given back).
 */
export class QuotaHold {
  readonly #account: QuotaAccount;
  readonly #ticket: QuotaTicket;
  #taken: number;
  #report: QuotaReport;
  #settled: boolean;
  /** CREDIT_QUOTA_EXCEEDED when the bucket did not hold the reservation (nothing was taken). */
  readonly refusal: GraphQLError | null;

  /** @internal Made by {@link QuotaAccount}. */
  constructor(
    account: QuotaAccount,
    ticket: QuotaTicket,
    taken: number,
    credits: number,
    refusal: GraphQLError | null = null,
  ) {
    this.#account = account;
    this.#ticket = ticket;
    this.#taken = taken;
    this.#report = quotaReport(account.quota, credits);
    this.refusal = refusal;
    this.#settled = refusal !== null;
  }

  /** Credits taken from the bucket so far. */
  get taken(): number {
    return this.#taken;
  }

  /** The bucket as it was last seen: after the reservation, then after the settlement. */
  get report(): QuotaReport {
    return this.#report;
  }

  /** Takes `more` from the bucket (all or nothing): false when it does not hold them. */
  readonly extend = async (more: number): Promise<boolean> => {
    const answer = await this.#ticket.reserve(more);
    if (!answer.admitted) return false;
    this.#taken += more;
    this.#account.quotas.observer.reserved(more);
    return true;
  };

  /**
   * Books `charged` of what was taken (what the service charged, the uncertain included) and
   * gives back the rest; once. Synchronous with a store that answers at once (memory).
   */
  settle(charged: number): MaybePromise<void> {
    if (this.#settled) return;
    this.#settled = true;
    const { quota, quotas } = this.#account;
    const refund = this.#taken - charged;
    if (refund > 0) quotas.observer.refunded(refund);
    const left = this.#ticket.settle(charged);
    const keep = (credits: number) => {
      this.#report = quotaReport(quota, credits);
    };
    if (typeof left === 'number') return keep(left);
    return left.then(keep, () => undefined);
  }
}

/**
 * A principal's quota at this gateway: the bucket its operations reserve from. Made per caller
 * that has one (`CREDIT_QUOTA`, or its token's `JWT_QUOTA_CLAIM`).
 */
export class QuotaAccount {
  constructor(
    readonly quotas: Quotas,
    readonly principal: string,
    readonly quota: CreditQuota,
  ) {}

  /**
   * Reserves `estimate` before an operation runs: a hold of it, or, when the bucket does not hold
   * it, a hold of nothing whose `refusal` is CREDIT_QUOTA_EXCEEDED (429, `Retry-After`), counted
   * as a refusal unless `counted` is false (a kept answer refused here runs, and is refused there).
   * Either reports the bucket as it is.
   */
  reserve(estimate: number, { counted = true } = {}): MaybePromise<QuotaHold> {
    const { store, observer } = this.quotas;
    const ticket = store.open(this.principal, this.quota);
    const decide = (answer: QuotaAnswer) => {
      if (!answer.admitted) {
        if (counted) observer.refused();
        // Took nothing; settled all the same, so that a reservation it gave up on is cancelled.
        void ticket.settle(0);
        const refusal = quotaRefusal(this.quota, estimate, answer.credits);
        return new QuotaHold(this, ticket, 0, answer.credits, refusal);
      }
      observer.reserved(estimate);
      return new QuotaHold(this, ticket, estimate, answer.credits);
    };
    const answer = ticket.reserve(estimate);
    return answer instanceof Promise ? answer.then(decide) : decide(answer);
  }

  /**
   * Reserves what the bucket holds, up to `most` (a subscription's catch-up, which fetches no
   * more than it holds): a hold of what was taken, maybe 0.
   */
  reserveUpTo(most: number): MaybePromise<QuotaHold> {
    const { store, observer } = this.quotas;
    const ticket = store.open(this.principal, this.quota);
    const decide = (answer: QuotaPartAnswer) => {
      if (answer.taken > 0) observer.reserved(answer.taken);
      return new QuotaHold(this, ticket, answer.taken, answer.credits);
    };
    const answer = ticket.reserveUpTo(most);
    return answer instanceof Promise ? answer.then(decide) : decide(answer);
  }
}
