import type { Plugin } from 'graphql-yoga';
import type { Context } from '../context.js';

/**
 * Ends each operation's upstream session once its execution is done (a streamed result: once its
 * stream ends), so that its deadline no longer runs.
 */
export function useUpstreamSession(): Plugin {
  return {
    onExecute({ args }) {
      const session = (args.contextValue as Partial<Context>).upstream;
      if (!session) return;
      return {
        onExecuteDone({ result }) {
          if (Symbol.asyncIterator in result) return { onEnd: () => session.end() };
          session.end();
          return undefined;
        },
      };
    },
  };
}
