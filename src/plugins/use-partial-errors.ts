import type { Plugin } from 'graphql-yoga';
import type { Context } from '../context.js';

/**
 * Appends to a result's `errors` the errors of fields that still returned data: a connection
 * whose later upstream page failed keeps the records already paid for (see
 * `Context.fieldErrors`), and the client learns why the page is short. At every door that
 * executes (HTTP and WebSocket alike).
 */
export function usePartialErrors(): Plugin {
  return {
    onExecute({ args }) {
      const context = args.contextValue as Partial<Context>;
      return {
        onExecuteDone({ result, setResult }) {
          const errors = context.fieldErrors;
          if (!errors?.length || Symbol.asyncIterator in result) return;
          setResult({ ...result, errors: [...(result.errors ?? []), ...errors] });
        },
      };
    },
  };
}
