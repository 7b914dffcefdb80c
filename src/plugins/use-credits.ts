import type { ExecutionArgs, ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Context } from '../context.js';
import { operationCredits } from '../credits/credit-extensions.js';
import type { Estimator } from '../estimate/estimate-operation.js';
import { coercedVariables } from '../admission/coerced-variables.js';

type MaybePromise<T> = T | Promise<T>;

/** The context as the credits read it: the GraphQL context over Yoga's, with its request. */
type CreditContext = Context & { request: Request };

const contextOf = (args: ExecutionArgs) => args.contextValue as CreditContext;

/** The admission's answer for an operation about to run: the result that stops it, if any. */
function admit(
  args: ExecutionArgs,
  estimate: Estimator,
  subscription: boolean,
): MaybePromise<ExecutionResult | undefined> {
  const context = contextOf(args);
  const variables = coercedVariables(args);
  // Bad variables are answered by useVariableErrors, which runs next.
  if (variables.errors) return undefined;
  const figures = estimate(args.document, args.operationName, variables.coerced);
  const decide = (admitted: Awaited<ReturnType<Context['admission']['admitRun']>>) => {
    if ('estimateOnly' in admitted) return { data: null };
    if (!('hold' in admitted)) return { errors: [admitted] };
    context.quotaHold = admitted.hold;
    return admitted.refusal ? { errors: [admitted.refusal] } : undefined;
  };
  const admitted = context.admission.admitRun(
    context.upstream,
    context.caller,
    context.request.headers,
    figures,
    subscription,
  );
  return admitted instanceof Promise ? admitted.then(decide) : decide(admitted);
}

/**
 * Settles an operation whose execution is done: its session ends (and its deadline), its quota
 * hold is settled to what it charged (the ledger's used and uncertain), and its result gets
 * `extensions` with its credits, which its booking keeps for the report.
 */
function settled(context: CreditContext, result: ExecutionResult): MaybePromise<ExecutionResult> {
  const { upstream, quotaHold } = context;
  upstream.end();
  const finish = (): ExecutionResult => {
    const extensions = operationCredits(upstream.ledger, upstream.budget, quotaHold?.report);
    if (context.booking) context.booking.credits = extensions;
    return { ...result, extensions: { ...result.extensions, ...extensions } };
  };
  const done = quotaHold?.settle(upstream.ledger.used + upstream.ledger.uncertain);
  return done instanceof Promise ? done.then(finish) : finish();
}

/** Runs `then` once `stop` is known, having stopped the operation with it if it is a result. */
function after<T>(
  stop: MaybePromise<ExecutionResult | undefined>,
  setResultAndStopExecution: (result: ExecutionResult) => void,
  then: () => T,
): MaybePromise<T> {
  const decided = (result: ExecutionResult | undefined) => {
    if (result) setResultAndStopExecution(result);
    return then();
  };
  return stop instanceof Promise ? stop.then(decided) : decided(stop);
}

/**
 * An operation's money, at every door that executes (HTTP and WebSocket alike, through Yoga's
 * envelop): before it runs, its estimate is made from the validated document and the coerced
 * variables, and the admission decides (`Admission.admitRun`: the budget, the limits, the quota);
 * once its execution is done, the session ends, the quota is settled and `extensions.credits`
 * written (`credits/credit-extensions.ts`). A subscription is estimated per payload against its
 * own budget, each payload reporting what it cost (`live/live-subscription.ts`).
 */
export function useCredits(estimate: Estimator): Plugin {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const context = contextOf(args);
      return after(admit(args, estimate, false), setResultAndStopExecution, () => ({
        onExecuteDone({ result, setResult }) {
          if (Symbol.asyncIterator in result) {
            return { onEnd: () => context.upstream.end() };
          }
          const next = settled(context, result);
          return next instanceof Promise ? next.then(setResult) : setResult(next);
        },
      }));
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      const context = contextOf(args);
      return after(admit(args, estimate, true), setResultAndStopExecution, () => ({
        onSubscribeResult({ result, setResult }) {
          // Refused before its source started: answered with what it came to (nothing spent).
          if (!(Symbol.asyncIterator in result)) {
            setResult(settled(context, result) as ExecutionResult);
            return undefined;
          }
          return {
            onNext({ result: payload, setResult: setPayload }) {
              const extensions = context.subscription?.report();
              if (extensions) {
                setPayload({ ...payload, extensions: { ...payload.extensions, ...extensions } });
              }
            },
            onEnd: () => context.upstream.end(),
          };
        },
      }));
    },
  };
}
