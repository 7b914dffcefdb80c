import { randomUUID } from 'node:crypto';
import { getOperationAST, type ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Context } from '../context.js';
import type { UpstreamSession } from '../upstream/upstream-session.js';

/** What one GraphQL request came to: a log line and the operation metrics are made from it. */
export interface OperationReport {
  /** The request's `X-Request-Id` if it sent a usable one, else a new UUID; echoed in the response. */
  requestId: string;
  /** The GraphQL endpoint that answered: `/graphql`, or `/subgraph` (a federation router's request). */
  endpoint: string;
  /** The operation's name in its document (or the request's `operationName`); null if none. */
  operation: string | null;
  /** The response's HTTP status. */
  status: number;
  /** From the request's arrival to its response (its body not yet sent). */
  ms: number;
  /** ok: no errors; partial: errors, and data in a root field; error: errors, no data. */
  outcome: 'ok' | 'partial' | 'error';
  /** The distinct `extensions.code` values of its errors, in order of appearance. */
  codes: string[];
  upstreamRequests: number;
  upstreamRetries: number;
  creditsUsed: number;
  creditsSaved: number;
  /** Credits timed-out attempts may have been charged (see `CreditLedger.uncertain`). */
  creditsUncertain: number;
  /** The estimate made before it ran; null when it never got that far. */
  creditsEstimate: number | null;
  /** The trace the request belongs to (32 hex digits), when traces are on. */
  traceId?: string;
  /** Pages served past their TTL because the service was down (`extensions.stale`). */
  stalePages: number;
  /** True when a whole answer kept from an earlier request was sent, nothing run (`src/answers/`). */
  answered?: boolean;
}

/** A request id kept from the client: printable, no spaces or quotes, at most 128 characters. */
const REQUEST_ID = /^[\w.:/+=@-]{1,128}$/;

/** The client's `X-Request-Id` if it is usable, else a new UUID. */
export function requestIdOf(incoming: string | null | undefined): string {
  return incoming && REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

interface RequestState {
  readonly started: number;
  readonly requestId: string;
  operation: string | null;
  result?: ExecutionResult;
  session?: UpstreamSession;
}

/** The distinct `extensions.code` values of a result's errors, in order (`NONE` for a bare one). */
export function codesOf(result: ExecutionResult | undefined): string[] {
  const codes = new Set<string>();
  for (const error of result?.errors ?? []) {
    const code = error.extensions?.['code'];
    codes.add(typeof code === 'string' ? code : 'NONE');
  }
  return [...codes];
}

/** ok without errors; with errors, partial if a root field has data, else error. */
function outcomeOf(result: ExecutionResult): OperationReport['outcome'] {
  if (!result.errors?.length) return 'ok';
  const data = result.data ?? {};
  return Object.values(data).some((value) => value !== null) ? 'partial' : 'error';
}

/**
 * Gives every response an `X-Request-Id` (the client's, or a new one) and reports each GraphQL
 * request once its response is ready: the name, outcome, codes, duration, upstream requests and
 * credits, and with traces on the trace it belongs to (`traceIdOf`). Requests that are not GraphQL
 * (GraphiQL's page, health, metrics) are not reported.
 */
export function useOperationReport(
  report: (report: OperationReport) => void,
  endpoint: string,
  traceIdOf?: (request: Request) => string | undefined,
): Plugin {
  const states = new WeakMap<Request, RequestState>();
  return {
    onRequest({ request }) {
      const incoming = request.headers.get('x-request-id');
      states.set(request, {
        started: performance.now(),
        requestId: requestIdOf(incoming),
        operation: null,
      });
    },
    onParams({ params, request }) {
      const state = states.get(request);
      if (state && typeof params.operationName === 'string') state.operation = params.operationName;
    },
    onExecute({ args }) {
      const context = args.contextValue as Partial<Context> & { request?: Request };
      const state = context.request && states.get(context.request);
      if (!state) return;
      state.session = context.upstream;
      const name = getOperationAST(args.document, args.operationName)?.name?.value;
      if (name) state.operation = name;
    },
    onResultProcess({ request, result }) {
      const state = states.get(request);
      if (state && !Array.isArray(result) && !(Symbol.asyncIterator in result)) {
        state.result = result;
      }
    },
    onResponse({ request, response }) {
      const state = states.get(request);
      if (!state) return;
      response.headers.set('x-request-id', state.requestId);
      if (!state.result) return;
      const ledger = state.session?.ledger;
      report({
        requestId: state.requestId,
        endpoint,
        operation: state.operation,
        status: response.status,
        ms: performance.now() - state.started,
        outcome: outcomeOf(state.result),
        codes: codesOf(state.result),
        upstreamRequests: ledger?.requests ?? 0,
        upstreamRetries: ledger?.retries ?? 0,
        creditsUsed: ledger?.used ?? 0,
        creditsSaved: ledger?.saved ?? 0,
        creditsUncertain: ledger?.uncertain ?? 0,
        creditsEstimate: state.session?.budget.estimate ?? null,
        traceId: traceIdOf?.(request),
        stalePages: ledger?.stale.length ?? 0,
      });
    },
  };
}
