import type { IncomingMessage } from 'node:http';
import { getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Context } from '../context.js';
import { keptHeaders, type AnswerSlot, type KnownAnswers } from '../answers/known-answers.js';
import type { UpstreamSession } from '../upstream/upstream-session.js';

/** A request that runs with a slot for its answer. */
interface Run {
  readonly slot: AnswerSlot;
  readonly session: UpstreamSession;
  readonly operation: string | null;
  /** The answer's `data` as JSON, once it is known to have no error. */
  data?: Buffer;
}

/**
 * Keeps the whole answer of a query that ran with a slot (the HTTP front gave it one) for repeat
 * views: only a 200 with data and no error, no page served stale and no charge left uncertain,
 * with its response headers (type, CORS, `Vary`, `Cache-Control`) as they were sent. Last in the
 * plugin list, so that every other plugin has set its headers. Notes the workspace's freshest
 * balance from every run. See `KnownAnswers`.
 */
export function useAnswerKeeping(answers: KnownAnswers): Plugin {
  const runs = new WeakMap<Request, Run>();
  return {
    onExecute({ args }) {
      const context = args.contextValue as unknown as Context & {
        request: Request;
        req?: IncomingMessage;
      };
      const slot = answers.slotOf(context.req);
      if (!slot) return;
      const operation = getOperationAST(args.document, args.operationName);
      if (operation?.operation !== 'query') return;
      runs.set(context.request, {
        slot,
        session: context.upstream,
        operation: operation.name?.value ?? null,
      });
    },
    onResultProcess({ request, result }) {
      const run = runs.get(request);
      if (!run || Array.isArray(result) || Symbol.asyncIterator in result) return;
      if (result.errors?.length || result.data == null) return;
      run.data = Buffer.from(JSON.stringify(result.data));
    },
    onResponse({ request, response }) {
      const run = runs.get(request);
      if (!run) return;
      const { ledger, budget } = run.session;
      answers.observe(run.slot.upstreamKey, ledger.remaining, ledger.remainingAt);
      if (!run.data || response.status !== 200 || budget.estimate === null) return;
      if (ledger.stale.length > 0 || ledger.uncertain > 0) return;
      answers.keep(
        run.slot,
        {
          data: run.data,
          headers: keptHeaders(response),
          operation: run.operation,
          estimate: budget.estimate,
          credits: ledger.used + ledger.saved,
          remaining: ledger.remaining,
          remainingAt: Number.isFinite(ledger.remainingAt) ? ledger.remainingAt : 0,
        },
        ledger.oldestPageAt,
      );
    },
  };
}
