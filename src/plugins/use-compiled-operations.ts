import type { DocumentNode, ExecutionArgs, ExecutionResult } from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import type { Plugin } from 'graphql-yoga';
import { deliveredInParts } from '../incremental/incremental-delivery.js';

/** A compiled operation, or the errors compiling it gave (answered as they are). */
type Compiled = Pick<CompiledQuery, 'query' | 'stringify'>;

/**
 * Runs each operation through graphql-jit, compiled once per document and operation name. Yoga
 * hands every caller of the same text the same parsed document, and a document may hold several
 * operations: the cache is keyed by both, so the operation a caller names is the one that runs
 * (`@envelop/graphql-jit` keys by the document alone, and ran the first caller's operation for
 * everyone). Compiling cut the gateway's CPU per 20-record page by about 40% (BENCHMARKS.md).
 * graphql-jit knows no `@defer` or `@stream` (it answers them whole): an operation that uses them,
 * asked by a client that reads an answer in parts, runs on Yoga's executor, which delivers them.
 */
export function useCompiledOperations(): Plugin {
  const compiled = new WeakMap<DocumentNode, Map<string, Compiled>>();

  function compiledOf(args: ExecutionArgs): Compiled {
    let byName = compiled.get(args.document);
    if (!byName) compiled.set(args.document, (byName = new Map()));
    const name = args.operationName ?? '';
    let entry = byName.get(name);
    if (!entry) {
      const result = compileQuery(args.schema, args.document, args.operationName ?? undefined);
      entry = isCompiledQuery(result)
        ? result
        : { query: () => result as ExecutionResult, stringify: JSON.stringify };
      byName.set(name, entry);
    }
    return entry;
  }

  const execute = (args: ExecutionArgs) => {
    const { query, stringify } = compiledOf(args);
    const withStringify = (result: ExecutionResult) => Object.assign(result, { stringify });
    const result = query(args.rootValue, args.contextValue, args.variableValues);
    return result instanceof Promise ? result.then(withStringify) : withStringify(result);
  };

  return {
    onExecute({ args, setExecuteFn }) {
      const request = (args.contextValue as { request?: Request }).request;
      if (deliveredInParts(args.document, request?.headers.get('accept'))) return;
      setExecuteFn(execute as Parameters<typeof setExecuteFn>[0]);
    },
  };
}
