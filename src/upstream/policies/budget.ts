import { CreditLedger } from '../../credits/credit-ledger.js';
import type { CreditBudget } from '../../credits/credit-budget.js';
import {
  requestWith,
  type UpstreamCall,
  type UpstreamPage,
  type UpstreamPolicy,
  type UpstreamRequest,
} from '../upstream-call.js';
import { UpstreamError } from '../upstream-error.js';

/**
 * The hard stop at the operation's budget: a page's `limit` is cut to the credits its operation
 * has left, and a page is not sent at all when nothing useful is left (CREDIT_BUDGET_EXHAUSTED,
 * failure `budget`). Outside the cache and the joining, so that a page served without a request
 * settles to what it cost: 0. The call books into a ledger of its own, a child of the
 * operation's, to tell its charge apart. The budget is the request's (`request.budget`, the
 * operation's); without one, nothing is limited.
 */
export function budget(): UpstreamPolicy {
  return (next) => (request) => {
    const { budget } = request;
    if (!budget) return next(request);
    if (budget.backed) return budget.ensure(request.limit).then(() => spend(next, request, budget));
    return spend(next, request, budget);
  };
}

/** Reserves the page's credits in `budget`, sends it, and settles to what it cost. */
function spend(
  next: UpstreamCall,
  request: UpstreamRequest,
  budget: CreditBudget,
): Promise<UpstreamPage> {
  const limit = budget.reserve(request.limit, request.skip);
  if (limit === 0) {
    return Promise.reject(
      new UpstreamError(
        `Not fetched: this operation has spent its credit budget (${budget.limit}). A list returns the records it has, with "hasNextPage" and "endCursor" to resume from; a lookup fails. A larger X-Credit-Budget lets the operation go further.`,
        { code: 'CREDIT_BUDGET_EXHAUSTED', failure: 'budget' },
      ),
    );
  }
  const ledger = new CreditLedger(request.ledger);
  // What the service may have charged for timed-out attempts counts too.
  const settle = () => budget.settle(limit, ledger.used + ledger.uncertain);
  return next(requestWith(request, { limit, ledger })).then(
    (page) => {
      settle();
      return page;
    },
    (error: unknown) => {
      settle();
      throw error;
    },
  );
}
