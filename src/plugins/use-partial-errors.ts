import type { GraphQLError } from 'graphql';
import { isAsyncIterable, mapAsyncIterator, type Plugin } from 'graphql-yoga';
import type { Context } from '../context.js';
import { placeErrors, type IncrementalPayload } from '../incremental/incremental-payload.js';

/**
 * The payloads of an answer in parts with the errors of `context.fieldErrors` placed in the
 * payload that carries their field (`placeErrors`), each once.
 */
function withPartialErrors(
  payloads: AsyncIterable<IncrementalPayload>,
  context: Partial<Context>,
): AsyncIterable<IncrementalPayload> {
  let taken = 0;
  let waiting: GraphQLError[] = [];
  return mapAsyncIterator(payloads, (payload: IncrementalPayload) => {
    const errors = context.fieldErrors ?? [];
    const placed = placeErrors(payload, [...waiting, ...errors.slice(taken)]);
    taken = errors.length;
    waiting = placed.waiting;
    return placed.payload;
  });
}

/**
 * Appends to a result's `errors` the errors of fields that still returned data: a connection
 * whose later upstream page failed keeps the records already paid for (see
 * `Context.fieldErrors`), and the client learns why the page is short. At every door that
 * executes (HTTP and WebSocket alike). An answer in parts gets each in the payload of its field.
 */
export function usePartialErrors(): Plugin {
  return {
    onExecute({ args }) {
      const context = args.contextValue as Partial<Context>;
      return {
        onExecuteDone({ result, setResult }) {
          if (isAsyncIterable(result)) {
            setResult(
              withPartialErrors(
                result as AsyncIterable<IncrementalPayload>,
                context,
              ) as typeof result,
            );
            return;
          }
          const errors = context.fieldErrors;
          if (!errors?.length) return;
          setResult({ ...result, errors: [...(result.errors ?? []), ...errors] });
        },
      };
    },
  };
}
