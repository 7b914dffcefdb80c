import type { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { ErrorCode, gatewayError } from '../errors.js';
import { coercedVariables } from '../admission/coerced-variables.js';

/** The error with a code: its own (a scalar's INVALID_INPUT), else BAD_USER_INPUT. */
function withCode(error: GraphQLError): GraphQLError {
  if (error.extensions.code !== undefined) return error;
  const { nodes, source, positions, path, originalError } = error;
  return gatewayError(
    ErrorCode.BAD_USER_INPUT,
    error.message,
    {},
    { nodes, source, positions, path, originalError },
  );
}

/**
 * Coerces the operation's variables with graphql-js before execution and answers its errors, each
 * with an `extensions.code`: the scalar's own where it has one (INVALID_INPUT from DateTime),
 * otherwise BAD_USER_INPUT (e.g. 1.5 or "2000" for an Int, a required variable not sent).
 * graphql-jit (which executes operations here) reports a bad variable only as "Expected type X",
 * dropping the scalar's own message and `extensions.code`, e.g. which ISO-8601 forms DateTime takes.
 */
export function useVariableErrors(): Plugin {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const coerced = coercedVariables(args);
      if (coerced.errors) {
        setResultAndStopExecution({ errors: coerced.errors.map(withCode) });
      }
    },
  };
}
