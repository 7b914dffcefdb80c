import { getOperationAST, type GraphQLError } from 'graphql';
import { getVariableValues } from 'graphql/execution/values.js';
import type { Plugin } from 'graphql-yoga';

/**
 * Coerces the operation's variables with graphql-js before execution and answers its errors.
 * graphql-jit (which executes operations here) reports a bad variable only as "Expected type X",
 * dropping the scalar's own message and `extensions.code`, e.g. which ISO-8601 forms DateTime takes.
 */
export function useVariableErrors(): Plugin {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const operation = getOperationAST(args.document, args.operationName);
      if (!operation?.variableDefinitions?.length) return;
      const coerced = getVariableValues(
        args.schema,
        operation.variableDefinitions,
        (args.variableValues ?? {}) as Record<string, unknown>,
        { maxErrors: 10 },
      );
      if (coerced.errors) {
        setResultAndStopExecution({ errors: coerced.errors as GraphQLError[] });
      }
    },
  };
}
