import { CreditLedger } from '../../credits/credit-ledger.js';
import { requestWith, type UpstreamPolicy } from '../upstream-call.js';
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
  return (next) => async (request) => {
    const { budget } = request;
    if (!budget) return next(request);
    if (budget.backed) await budget.ensure(request.limit);
    const limit = budget.reserve(request.limit, request.skip);
    if (limit === 0) {
      throw new UpstreamError(
        `Not fetched: this operation has spent its credit budget (${budget.limit}). A list returns the records it has, with "hasNextPage" and "endCursor" to resume from; a lookup fails. A larger X-Credit-Budget lets the operation go further.`,
        { code: 'CREDIT_BUDGET_EXHAUSTED', failure: 'budget' },
      );
    }
    const ledger = new CreditLedger(request.ledger);
    try {
      return await next(requestWith(request, { limit, ledger }));
    } finally {
      // What the service may have charged for timed-out attempts counts too.
      budget.settle(limit, ledger.used + ledger.uncertain);
    }
  };
}
