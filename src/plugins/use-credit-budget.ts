import { GraphQLError, type ExecutionArgs, type ExecutionResult } from 'graphql';
import type { Plugin, YogaInitialContext } from 'graphql-yoga';
import type { Context } from '../context.js';
import { ErrorCode, gatewayError } from '../errors.js';
import type { Estimator } from '../estimate/estimate-operation.js';
import { coercedVariables } from './coerced-variables.js';

/** Options of {@link useCreditBudget}. */
export interface CreditBudgetOptions {
  estimate: Estimator;
  /** The budget of a request without `X-Credit-Budget`. */
  defaultBudget: number;
  /** The budget of a subscription without `X-Credit-Budget` (`SUBSCRIPTION_BUDGET_DEFAULT`). */
  subscriptionBudget: number;
  /** The largest budget a request may ask for; a larger one is lowered to it. */
  maxBudget: number;
  /** The most records an answer may hold by the estimate. */
  maxRecords: number;
  /** The most upstream requests an operation may send (`MAX_UPSTREAM_REQUESTS`). */
  maxRequests: number;
}

/** The request header that sets an operation's budget in credits. */
export const BUDGET_HEADER = 'x-credit-budget';
/** The request header that asks for the estimate alone (`only`): nothing runs. */
export const ESTIMATE_HEADER = 'x-credit-estimate';

/** The budget a request asks for, lowered to the ceiling; an error for a value that is not one. */
export function budgetOf(
  header: string | null,
  options: Pick<CreditBudgetOptions, 'maxBudget'>,
  defaultBudget: number,
): number | GraphQLError {
  const text = header?.trim();
  if (!text) return defaultBudget;
  if (!/^\d{1,15}$/.test(text)) {
    return gatewayError(
      ErrorCode.BAD_REQUEST,
      `Header "X-Credit-Budget": must be a whole number of credits from 0 to ${options.maxBudget} (got "${text.slice(0, 40)}").`,
    );
  }
  return Math.min(Number(text), options.maxBudget);
}

/**
 * Credit safety before anything runs. Estimates what the operation will cost in credits from the
 * validated document and the request's variables (exact where the service bounds sizes, assumed
 * sizes elsewhere; see `CreditCost`), then:
 * - `X-Credit-Estimate: only` answers `data: null` with the estimate, and spends nothing;
 * - above the budget (`X-Credit-Budget`, else the default; at most the ceiling) it refuses the
 *   operation with CREDIT_BUDGET_EXCEEDED `{ estimate, budget }`, before any upstream request;
 * - an operation that could send more than `maxRequests` upstream requests is refused
 *   (UPSTREAM_REQUESTS_EXCEEDED): lookups that find nothing cost no credit, but a request each;
 * - an answer that could hold more than `maxRecords` records is refused (RESPONSE_TOO_LARGE),
 *   the money first: a client learns of its budget before the size;
 * - otherwise the operation may spend up to its budget, never more: a hard stop the upstream
 *   session keeps page by page (see `CreditBudget`).
 * The figures reach `extensions.credits` through `useCreditsExtension`.
 */
export function useCreditBudget(options: CreditBudgetOptions): Plugin {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const refused = admit(args, options, options.defaultBudget);
      if (refused) setResultAndStopExecution(refused);
    },
    // A subscription is estimated per payload, against its own budget (`SUBSCRIPTION_BUDGET_DEFAULT`).
    onSubscribe({ args, setResultAndStopExecution }) {
      const refused = admit(args, options, options.subscriptionBudget);
      if (refused) setResultAndStopExecution(refused);
    },
  };
}

/** The answer that stops an operation before it runs, or undefined to let it run. */
function admit(
  args: ExecutionArgs,
  options: CreditBudgetOptions,
  defaultBudget: number,
): ExecutionResult | undefined {
  const context = args.contextValue as Context & YogaInitialContext;
  const { headers } = context.request;
  const budget = budgetOf(headers.get(BUDGET_HEADER), options, defaultBudget);
  if (budget instanceof GraphQLError) return { errors: [budget] };
  const variables = coercedVariables(args);
  // Bad variables are answered by useVariableErrors, which runs first.
  if (variables.errors) return undefined;
  const estimate = options.estimate(args.document, args.operationName, variables.coerced);
  context.upstream.budget.set(budget, estimate.credits);
  if (headers.get(ESTIMATE_HEADER)?.trim().toLowerCase() === 'only') return { data: null };
  if (estimate.credits > budget) {
    const raise =
      budget < options.maxBudget
        ? `, or send a larger budget in the X-Credit-Budget header (at most ${options.maxBudget})`
        : '';
    return {
      errors: [
        gatewayError(
          ErrorCode.CREDIT_BUDGET_EXCEEDED,
          `This operation is estimated at ${estimate.credits} credits, above its budget of ${budget}. Ask for fewer records (a smaller "first", fewer aliases or less nesting)${raise}.`,
          { estimate: estimate.credits, budget },
        ),
      ],
    };
  }
  if (estimate.requests > options.maxRequests) {
    return {
      errors: [
        gatewayError(
          ErrorCode.UPSTREAM_REQUESTS_EXCEEDED,
          `This operation could send ${estimate.requests} upstream requests, above the limit of ${options.maxRequests} (MAX_UPSTREAM_REQUESTS). Ask for fewer lookups or fewer lists (fewer ids, aliases or less nesting).`,
          { requests: estimate.requests, limit: options.maxRequests },
        ),
      ],
    };
  }
  if (estimate.records > options.maxRecords) {
    return {
      errors: [
        gatewayError(
          ErrorCode.RESPONSE_TOO_LARGE,
          `This operation's answer could hold ${estimate.records} records, above the limit of ${options.maxRecords}. Ask for fewer records (a smaller "first", fewer aliases or less nesting).`,
          { records: estimate.records, limit: options.maxRecords },
        ),
      ],
    };
  }
  return undefined;
}
