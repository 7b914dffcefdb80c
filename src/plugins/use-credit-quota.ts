import type { Plugin } from 'graphql-yoga';
import type { Context } from '../context.js';
import { ErrorCode, gatewayError } from '../errors.js';
import { restoreRate, type CreditQuota } from '../quota/credit-quota.js';
import type { QuotaAnswer, QuotaObserver, QuotaStore } from '../quota/quota-store.js';
import { secondsUntil } from '../quota/token-bucket.js';

/** Options of {@link useCreditQuota}. */
export interface CreditQuotaOptions {
  store: QuotaStore;
  observer: QuotaObserver;
}

/** What `extensions.credits.quota` and the `RateLimit` headers report of the caller's bucket. */
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

/** The bucket as `extensions.credits.quota` reports it, `credits` being what is left. */
export function report(quota: CreditQuota, credits: number): QuotaReport {
  return {
    limit: quota.credits,
    remaining: Math.max(0, Math.floor(credits)),
    restoreRate: restoreRate(quota),
    windowSeconds: quota.windowSeconds,
  };
}

/** CREDIT_QUOTA_EXCEEDED for `estimate` when the bucket holds `credits`, with `Retry-After`. */
export function refusal(quota: CreditQuota, estimate: number, credits: number) {
  const available = Math.max(0, Math.floor(credits));
  const retryAfter = secondsUntil(quota, credits, estimate);
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

/**
 * Credit quotas per principal over time, after `useCreditBudget` (which leaves the estimate in
 * `context.upstream.budget`) and before anything runs. The estimate is reserved in the caller's
 * bucket (`context.creditQuota`: `CREDIT_QUOTA`, or the token's `JWT_QUOTA_CLAIM`); one that does
 * not fit is refused with CREDIT_QUOTA_EXCEEDED (429, `Retry-After`) before any upstream request.
 * Once the execution is done (a stream: once it ends) the bucket is settled to what the operation
 * charged (`ledger.used + ledger.uncertain`), the rest given back; meanwhile it never spends more
 * than the bucket backs (pages beyond the estimate take more first). The bucket's state is left in
 * `context.quota` for `useCreditsExtension`. A caller without a principal or a quota passes.
 */
export function useCreditQuota({ store, observer }: CreditQuotaOptions): Plugin {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const context = args.contextValue as unknown as Context;
      const { principal, creditQuota: quota } = context;
      const estimate = context.upstream.budget.estimate;
      if (principal === null || quota === null || estimate === null) return;
      const decide = (answer: QuotaAnswer) => {
        context.quota = report(quota, answer.credits);
        if (!answer.admitted) {
          observer.refused();
          setResultAndStopExecution({ errors: [refusal(quota, estimate, answer.credits)] });
          return undefined;
        }
        observer.reserved(estimate);
        // The operation spends only what the bucket backs: beyond its estimate, a page takes more
        // from the bucket first, and is cut when the bucket has none (CREDIT_BUDGET_EXHAUSTED).
        let taken = estimate;
        context.upstream.budget.backBy(estimate, async (more) => {
          const extension = await store.reserve(principal, quota, more);
          if (extension.admitted) {
            taken += more;
            observer.reserved(more);
          }
          return extension.admitted;
        });
        // Synchronous with a store that answers at once (memory): the result is not held back.
        const settle = () => {
          const { ledger } = context.upstream;
          const refund = taken - (ledger.used + ledger.uncertain);
          if (refund > 0) observer.refunded(refund);
          const left = answer.heldBy.settle(principal, quota, refund);
          if (typeof left !== 'number') {
            return left.then((credits) => {
              context.quota = report(quota, credits);
            });
          }
          context.quota = report(quota, left);
          return undefined;
        };
        return {
          onExecuteDone: ({ result }: { result: object }) =>
            Symbol.asyncIterator in result ? { onEnd: () => void settle() } : settle(),
        };
      };
      const answer = store.reserve(principal, quota, estimate);
      return answer instanceof Promise ? answer.then(decide) : decide(answer);
    },
  };
}
