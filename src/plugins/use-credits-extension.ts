import type { Plugin } from 'graphql-yoga';
import type { Context } from '../context.js';

/** What every response reports in `extensions`. */
export interface CreditExtensions {
  credits: { used: number; remaining: number | null };
  upstreamRequests: number;
}

const NOTHING_SPENT: CreditExtensions = {
  credits: { used: 0, remaining: null },
  upstreamRequests: 0,
};

/**
 * Adds `extensions.credits` ({ used, remaining }) and `extensions.upstreamRequests` to every
 * result: from the operation's ledger after execution, and as zero for requests that never reached
 * execution (a syntax or validation error).
 */
export function useCreditsExtension(): Plugin {
  return {
    onExecutionResult({ result, setResult, context }) {
      const ledger = (context as Partial<Context>).upstream?.ledger;
      if (!ledger || !result || Symbol.asyncIterator in result) return;
      setResult({
        ...result,
        extensions: {
          ...result.extensions,
          credits: { used: ledger.used, remaining: ledger.remaining },
          upstreamRequests: ledger.requests,
        },
      });
    },
    onResultProcess({ result, setResult }) {
      if (Array.isArray(result) || Symbol.asyncIterator in result) return;
      if (result.extensions && 'credits' in result.extensions) return;
      setResult({ ...result, extensions: { ...result.extensions, ...NOTHING_SPENT } });
    },
  };
}
