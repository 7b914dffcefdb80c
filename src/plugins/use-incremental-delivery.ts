import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import { GraphQLError } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { maskError } from '../errors.js';
import { mapPartErrors, type IncrementalPayload } from '../incremental/incremental-payload.js';

/**
 * A part's error as a client sees it: masked as Yoga masks the errors at a payload's top, and
 * without what Yoga keeps from clients there (`extensions.http`, the response's status, which an
 * answer in parts has sent already; `unexpected`).
 */
function forClient(error: GraphQLError): GraphQLError {
  const masked = maskError(error, 'Unexpected error.') as GraphQLError;
  const { http, unexpected, ...extensions } = masked.extensions ?? {};
  if (http === undefined && unexpected === undefined) return masked;
  const { nodes, source, positions, path, originalError } = masked;
  return new GraphQLError(masked.message, {
    nodes,
    source,
    positions,
    path,
    originalError,
    extensions,
  });
}

/**
 * `@defer` and `@stream` (`@graphql-yoga/plugin-defer-stream`: their validation rules), for a
 * schema that declares them. Which operations are delivered in parts is decided where the executor
 * is chosen (`useCompiledOperations`). Yoga masks the errors at the top of each payload only: the
 * errors of a deferred fragment or a stream's items are masked here alike, so that an
 * `UpstreamError` under them becomes its coded GraphQL error at its path (CREDIT_BUDGET_EXHAUSTED,
 * UPSTREAM_...), never an uncoded one.
 */
export function useIncrementalDelivery(): Plugin {
  return {
    onPluginInit({ addPlugin }) {
      addPlugin(useDeferStream() as Plugin);
    },
    onExecute() {
      return {
        onExecuteDone({ result }) {
          if (!isAsyncIterable(result)) return undefined;
          return {
            onNext({ result: payload, setResult }) {
              const next = mapPartErrors(payload as IncrementalPayload, forClient);
              if (next !== payload) setResult(next as typeof payload);
            },
          };
        },
      };
    },
  };
}
