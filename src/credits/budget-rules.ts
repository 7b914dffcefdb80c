import type { GraphQLError } from 'graphql';
import { ErrorCode, gatewayError } from '../errors.js';
import type { Estimate } from '../estimate/estimate-operation.js';

/** The request header that sets an operation's budget in credits. */
export const BUDGET_HEADER = 'x-credit-budget';
/** The request header that asks for the estimate alone (`only`): nothing runs. */
export const ESTIMATE_HEADER = 'x-credit-estimate';

/** What bounds one operation's spending and size, from the settings. */
export interface BudgetRules {
  /** The budget of a request without `X-Credit-Budget` (`CREDIT_BUDGET_DEFAULT`). */
  defaultBudget: number;
  /** The budget of a subscription without `X-Credit-Budget` (`SUBSCRIPTION_BUDGET_DEFAULT`). */
  subscriptionBudget: number;
  /** The largest budget a request may ask for; a larger one is lowered to it. */
  maxBudget: number;
  /** The most records an answer may hold by the estimate (`MAX_RESPONSE_RECORDS`). */
  maxRecords: number;
  /** The most upstream requests an operation may send (`MAX_UPSTREAM_REQUESTS`). */
  maxRequests: number;
}

/** What asks for the estimate alone: `X-Credit-Estimate: only`. */
export function estimateOnly(header: string | null): boolean {
  return header?.trim().toLowerCase() === 'only';
}

/**
 * The budget a request asks for in `X-Credit-Budget` (`header`), else `defaultBudget`, lowered to
 * the ceiling; BAD_REQUEST for a value that is not a whole number of credits.
 */
export function budgetOf(
  header: string | null,
  rules: Pick<BudgetRules, 'maxBudget'>,
  defaultBudget: number,
): number | GraphQLError {
  const text = header?.trim();
  if (!text) return defaultBudget;
  if (!/^\d{1,15}$/.test(text)) {
    return gatewayError(
      ErrorCode.BAD_REQUEST,
      `Header "X-Credit-Budget": must be a whole number of credits from 0 to ${rules.maxBudget} (got "${text.slice(0, 40)}").`,
    );
  }
  return Math.min(Number(text), rules.maxBudget);
}

/**
 * Whether an operation of `estimate` may run with `budget`, before anything of it runs: undefined
 * when it may, else its refusal. The money first (CREDIT_BUDGET_EXCEEDED, a client learns of its
 * budget before the size), then the upstream requests it could send (UPSTREAM_REQUESTS_EXCEEDED:
 * lookups that find nothing cost no credit, but a request each), then the records its answer could
 * hold (RESPONSE_TOO_LARGE).
 */
export function budgetRefusal(
  estimate: Estimate,
  budget: number,
  rules: BudgetRules,
): GraphQLError | undefined {
  if (estimate.credits > budget) {
    const raise =
      budget < rules.maxBudget
        ? `, or send a larger budget in the X-Credit-Budget header (at most ${rules.maxBudget})`
        : '';
    return gatewayError(
      ErrorCode.CREDIT_BUDGET_EXCEEDED,
      `This operation is estimated at ${estimate.credits} credits, above its budget of ${budget}. Ask for fewer records (a smaller "first", fewer aliases or less nesting)${raise}.`,
      { estimate: estimate.credits, budget },
    );
  }
  if (estimate.requests > rules.maxRequests) {
    return gatewayError(
      ErrorCode.UPSTREAM_REQUESTS_EXCEEDED,
      `This operation could send ${estimate.requests} upstream requests, above the limit of ${rules.maxRequests} (MAX_UPSTREAM_REQUESTS). Ask for fewer lookups or fewer lists (fewer ids, aliases or less nesting).`,
      { requests: estimate.requests, limit: rules.maxRequests },
    );
  }
  if (estimate.records > rules.maxRecords) {
    return gatewayError(
      ErrorCode.RESPONSE_TOO_LARGE,
      `This operation's answer could hold ${estimate.records} records, above the limit of ${rules.maxRecords}. Ask for fewer records (a smaller "first", fewer aliases or less nesting).`,
      { records: estimate.records, limit: rules.maxRecords },
    );
  }
  return undefined;
}
