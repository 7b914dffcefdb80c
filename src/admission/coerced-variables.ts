import { getOperationAST, type ExecutionArgs, type GraphQLError } from 'graphql';
import { getVariableValues } from 'graphql/execution/values.js';

type Coerced =
  { coerced: Record<string, unknown>; errors?: never } | { errors: readonly GraphQLError[] };

const byArgs = new WeakMap<ExecutionArgs, Coerced>();
const NONE: Coerced = { coerced: {} };

/**
 * The operation's variables coerced by graphql-js (defaults applied, types checked), once per
 * execution however many plugins ask: `{ coerced }`, or `{ errors }` when a value does not fit.
 */
export function coercedVariables(args: ExecutionArgs): Coerced {
  let result = byArgs.get(args);
  if (!result) {
    const operation = getOperationAST(args.document, args.operationName);
    result = operation?.variableDefinitions?.length
      ? getVariableValues(
          args.schema,
          operation.variableDefinitions,
          (args.variableValues ?? {}) as Record<string, unknown>,
          { maxErrors: 10 },
        )
      : NONE;
    byArgs.set(args, result);
  }
  return result;
}
