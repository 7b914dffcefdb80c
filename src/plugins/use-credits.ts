import type { ExecutionArgs, ExecutionResult } from 'graphql';
import { isAsyncIterable, mapAsyncIterator, type Plugin } from 'graphql-yoga';
import type { Context } from '../context.js';
import { operationCredits, type CreditExtensions } from '../credits/credit-extensions.js';
import { withClosingPayload } from '../incremental/closing-payload.js';
import type { IncrementalPayload } from '../incremental/incremental-payload.js';
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
 * Settles an operation whose execution is done, once: its session ends (and its deadline), its
 * quota hold is settled to what it charged (the ledger's used and uncertain), and its booking keeps
 * its credits for the report (at once, then as settled). Gives its `extensions`, as settled.
 */
function settle(context: CreditContext): MaybePromise<CreditExtensions> {
  const { upstream, quotaHold } = context;
  upstream.end();
  const book = (): CreditExtensions => {
    const extensions = operationCredits(upstream.ledger, upstream.budget, quotaHold?.report);
    if (context.booking) context.booking.credits = extensions;
    return extensions;
  };
  book();
  const done = quotaHold?.settle(upstream.ledger.used + upstream.ledger.uncertain);
  return done instanceof Promise ? done.then(book) : book();
}

/** `result` with `extensions` added to its own. */
function withCredits<R extends ExecutionResult | IncrementalPayload>(
  result: R,
  extensions: CreditExtensions,
): R {
  return { ...result, extensions: { ...result.extensions, ...extensions } };
}

/** Settles an operation answered in one result, and writes its credits there. */
function settled(context: CreditContext, result: ExecutionResult): MaybePromise<ExecutionResult> {
  const extensions = settle(context);
  return extensions instanceof Promise
    ? extensions.then((settled) => withCredits(result, settled))
    : withCredits(result, extensions);
}

/**
 * The payloads of an operation answered in parts (`@defer`, `@stream`), with its credits: each
 * payload what the operation has spent so far (the deferred parts run beside the first, so it may
 * include some of theirs); the last, once the operation is settled, its totals, as a payload
 * without parts after the last part when that one has parts (clients read `extensions` at the
 * top of a payload without parts). The client going away settles it to what it spent, once its
 * requests in flight have ended; the end of the answer (its report) waits for that.
 */
function creditedPayloads(
  context: CreditContext,
  payloads: AsyncIterable<IncrementalPayload>,
): AsyncIterable<IncrementalPayload> {
  const { upstream, quotaHold } = context;
  let settling: MaybePromise<CreditExtensions> | undefined;
  const settleOnce = () => (settling ??= settle(context));
  // The client went away: the requests in flight end first (aborted, booked as possibly
  // charged), so that the quota is settled to all the service may have charged.
  const settleAfterInFlight = async () => {
    if (!settling) await upstream.settled();
    await settleOnce();
  };
  let closing: IncrementalPayload | undefined;
  const credited = mapAsyncIterator(
    payloads,
    (payload: IncrementalPayload): MaybePromise<IncrementalPayload> => {
      const soFar = () => operationCredits(upstream.ledger, upstream.budget, quotaHold?.report);
      if (payload.hasNext !== false) return withCredits(payload, soFar());
      const close = (totals: CreditExtensions) => {
        if (!payload.incremental?.length) return withCredits(payload, totals);
        closing = { hasNext: false, extensions: totals };
        return withCredits({ ...payload, hasNext: true }, soFar());
      };
      const totals = settleOnce();
      return totals instanceof Promise ? totals.then(close) : close(totals);
    },
    // The payloads failed: settled all the same, and the failure goes on.
    async (error: unknown) => {
      await settleAfterInFlight();
      throw error;
    },
    settleAfterInFlight,
  );
  return withClosingPayload(credited, () => closing);
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
 * written (`credits/credit-extensions.ts`); an answer in parts says at each payload what was spent
 * so far, and at its last the totals. A subscription is estimated per payload against its
 * own budget, each payload reporting what it cost (`live/live-subscription.ts`).
 */
export function useCredits(estimate: Estimator): Plugin {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const context = contextOf(args);
      return after(admit(args, estimate, false), setResultAndStopExecution, () => ({
        onExecuteDone({ result, setResult }) {
          if (isAsyncIterable(result)) {
            const payloads = result as AsyncIterable<IncrementalPayload>;
            setResult(creditedPayloads(context, payloads) as typeof result);
            return undefined;
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
