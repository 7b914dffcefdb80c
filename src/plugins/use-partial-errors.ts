import type { Plugin } from 'graphql-yoga';
import type { Context } from '../context.js';

/**
 * Appends to the response's `errors` the errors of fields that still returned data: a connection
 * whose later upstream page failed keeps the records already paid for (see
 * `Context.fieldErrors`), and the client learns why the page is short.
 */
export function usePartialErrors(): Plugin {
  return {
    onExecutionResult({ result, setResult, context }) {
      const errors = (context as Partial<Context>).fieldErrors;
      if (!errors?.length || !result || Symbol.asyncIterator in result) return;
      setResult({ ...result, errors: [...(result.errors ?? []), ...errors] });
    },
  };
}
