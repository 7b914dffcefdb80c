import { getOperationAST, type ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { AnswerSlot, DoorContext } from '../admission/door-context.js';
import type { Context } from '../context.js';
import {
  ANSWER_OPEN,
  answerTail,
  keptHeaders,
  type KnownAnswers,
} from '../answers/known-answers.js';
import type { UpstreamSession } from '../upstream/upstream-session.js';

/** A request that runs with a slot for its answer: what its context keeps of it. */
interface Run {
  readonly slot: AnswerSlot;
  readonly session: UpstreamSession;
  readonly operation: string | null;
  /** The answer's `data` as JSON, once it is known to have no error. */
  data?: Buffer;
}

/** A result that says how it is written: Yoga's result processors call its `stringify`. */
interface Stringified {
  stringify?: (result: unknown) => string;
}

/**
 * The `data` of `result` as JSON, cut from the answer's own text rather than written a second
 * time: the whole result is written once here and handed to Yoga's result processor through the
 * result's `stringify` (which Yoga's processors call with the result, or with a copy of it without
 * internal extensions; only the result itself gets the text). None for a result with other members
 * than `data` and `extensions`, which is then not kept.
 */
function keptData(result: ExecutionResult & Stringified): Buffer | undefined {
  const members = Object.keys(result).filter((member) => member !== 'stringify');
  if (members[0] !== 'data' || members.length > 2) return undefined;
  if (members.length === 2 && members[1] !== 'extensions') return undefined;
  const write = result.stringify ?? JSON.stringify;
  const text = write(result);
  const tail = answerTail(result.extensions);
  if (!text.startsWith(ANSWER_OPEN) || !text.endsWith(tail)) return undefined;
  result.stringify = (given: unknown) => (given === result ? text : write(given));
  return Buffer.from(text.slice(ANSWER_OPEN.length, text.length - tail.length));
}

/** Keeps `data`, the answer of `run` sent as `response`, if it may be kept. */
function keep(answers: KnownAnswers, run: Run, response: Response, data: Buffer | undefined): void {
  const { ledger, budget } = run.session;
  answers.observe(run.slot.upstreamKey, ledger.remaining, ledger.remainingAt);
  if (!data || response.status !== 200 || budget.estimate === null) return;
  if (ledger.stale.length > 0 || ledger.uncertain > 0) return;
  answers.keep(
    run.slot,
    {
      data,
      headers: keptHeaders(response),
      operation: run.operation,
      estimate: budget.estimate,
      credits: ledger.used + ledger.saved,
      remaining: ledger.remaining,
      remainingAt: Number.isFinite(ledger.remainingAt) ? ledger.remainingAt : 0,
    },
    ledger.oldestPageAt,
  );
}

/**
 * Keeps the whole answer of a query that ran with a slot (the HTTP front gave it one) for repeat
 * views: only a 200 with data and no error, no page served stale and no charge left uncertain,
 * with its response headers (type, CORS, `Vary`, `Cache-Control`) as they were sent. Last in the
 * plugin list, so that every other plugin has set its headers. An answer in parts (`@defer`,
 * `@stream`) is kept once its last payload was sent, as its payloads came to, whole: a repeat
 * that asks as it did gets it in one payload (`serveKnownAnswers`). Notes the workspace's
 * freshest balance from every run. See `KnownAnswers`.
 */
export function useAnswerKeeping(answers: KnownAnswers): Plugin {
  return {
    onExecute({ args }) {
      const context = args.contextValue as unknown as Context & { answerRun?: Run };
      const slot = context.answerSlot;
      if (!slot) return;
      const operation = getOperationAST(args.document, args.operationName);
      if (operation?.operation !== 'query') return;
      context.answerRun = {
        slot,
        session: context.upstream,
        operation: operation.name?.value ?? null,
      };
    },
    onResultProcess({ result, serverContext }) {
      const run = (serverContext as { answerRun?: Run }).answerRun;
      if (!run || Array.isArray(result) || Symbol.asyncIterator in result) return;
      if (result.errors?.length || result.data == null) return;
      if ((serverContext as Partial<Context>).ownState) return;
      run.data = keptData(result as ExecutionResult & Stringified);
    },
    onResponse({ response, serverContext }) {
      const run = (serverContext as { answerRun?: Run }).answerRun;
      if (!run) return;
      const parts = (serverContext as DoorContext).booking?.parts;
      if (!parts) return keep(answers, run, response, run.data);
      parts.ended(() => {
        const { complete } = parts;
        const whole = parts.whole && !complete.errors.length && complete.data != null;
        const own = (serverContext as Partial<Context>).ownState;
        const data = whole && !own ? Buffer.from(JSON.stringify(complete.data)) : undefined;
        keep(answers, run, response, data);
      });
    },
  };
}
