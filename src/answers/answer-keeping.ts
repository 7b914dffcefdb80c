import type { ExecutionResult } from 'graphql';
import type { AnswerSlot } from '../admission/door-context.js';
import type { Context } from '../context.js';
import type { UpstreamSession } from '../upstream/upstream-session.js';
import { ANSWER_OPEN, answerTail, keptHeaders, type KnownAnswers } from './known-answers.js';

/** A query that runs with a slot for its answer: what its context keeps of it (`answerRun`). */
export interface AnswerRun {
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
 * time: the whole result is written once here and handed to the result processor through the
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

/**
 * Notes the `data` of a whole result about to be sent, for {@link keepAnswer}: only a result with
 * data and no error, of a run with a slot, whose context kept no state of its own.
 */
export function noteAnswer(context: Partial<Context> & { answerRun?: AnswerRun }, result: unknown) {
  const run = context.answerRun;
  if (!run || Array.isArray(result) || Symbol.asyncIterator in (result as object)) return;
  const answered = result as ExecutionResult;
  if (answered.errors?.length || answered.data == null || context.ownState) return;
  run.data = keptData(answered as ExecutionResult & Stringified);
}

/**
 * Keeps `data`, the answer of `run` sent with `status` and `headers`, if it may be kept: a 200
 * whose cost is known, no page served stale and no charge left uncertain. Notes the workspace's
 * freshest balance from every run.
 */
export function keepAnswer(
  answers: KnownAnswers,
  run: AnswerRun,
  status: number,
  headers: Iterable<[string, string]>,
  data: Buffer | undefined,
): void {
  const { ledger, budget } = run.session;
  answers.observe(run.slot.upstreamKey, ledger.remaining, ledger.remainingAt);
  if (!data || status !== 200 || budget.estimate === null) return;
  if (ledger.stale.length > 0 || ledger.uncertain > 0) return;
  answers.keep(
    run.slot,
    {
      data,
      headers: keptHeaders(headers),
      operation: run.operation,
      estimate: budget.estimate,
      credits: ledger.used + ledger.saved,
      remaining: ledger.remaining,
      remainingAt: Number.isFinite(ledger.remainingAt) ? ledger.remainingAt : 0,
    },
    ledger.oldestPageAt,
  );
}
