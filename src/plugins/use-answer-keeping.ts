import { getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { DoorContext } from '../admission/door-context.js';
import type { Context } from '../context.js';
import { keepAnswer, noteAnswer, type AnswerRun } from '../answers/answer-keeping.js';
import type { KnownAnswers } from '../answers/known-answers.js';

type Kept = Partial<Context> & DoorContext & { answerRun?: AnswerRun };

/**
 * Keeps the whole answer of a query that ran with a slot (the HTTP front gave it one) for repeat
 * views (`answers/answer-keeping.ts`), with its response headers (type, CORS, `Vary`,
 * `Cache-Control`) as they were sent. Last in the plugin list, so that every other plugin has set
 * its headers. An answer in parts (`@defer`, `@stream`) is kept once its last payload was sent, as
 * its payloads came to, whole: a repeat that asks as it did gets it in one payload
 * (`serveKnownAnswers`). See `KnownAnswers`.
 */
export function useAnswerKeeping(answers: KnownAnswers): Plugin {
  return {
    onExecute({ args }) {
      const context = args.contextValue as Kept;
      const slot = context.answerSlot;
      if (!slot || !context.upstream) return;
      const operation = getOperationAST(args.document, args.operationName);
      if (operation?.operation !== 'query') return;
      context.answerRun = {
        slot,
        session: context.upstream,
        operation: operation.name?.value ?? null,
      };
    },
    onResultProcess({ result, serverContext }) {
      noteAnswer(serverContext as Kept, result);
    },
    onResponse({ response, serverContext }) {
      const context = serverContext as Kept;
      const run = context.answerRun;
      if (!run) return;
      const parts = context.booking?.parts;
      if (!parts) return keepAnswer(answers, run, response.status, response.headers, run.data);
      parts.ended(() => {
        const { complete } = parts;
        const whole = parts.whole && !complete.errors.length && complete.data != null;
        const data =
          whole && !context.ownState ? Buffer.from(JSON.stringify(complete.data)) : undefined;
        keepAnswer(answers, run, response.status, response.headers, data);
      });
    },
  };
}
