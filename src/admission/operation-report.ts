import { randomUUID } from 'node:crypto';
import type { ExecutionResult } from 'graphql';
import type { CreditExtensions } from '../credits/credit-extensions.js';

/** The door an operation came in by. */
export type Door =
  /** Yoga over HTTP (GET, POST; a subscription's SSE stream too). */
  | 'http'
  /** A whole answer kept from an earlier request, sent by the repeat-view front. */
  | 'answer'
  /** graphql-ws over a WebSocket. */
  | 'websocket'
  /** An alert's subscription, run by the gateway for its owner (`src/alerts/`). */
  | 'alert';

/**
 * What one operation came to: its log line and its metrics are made from it, alike for every
 * door. A query is reported when its answer is ready; a subscription when it ends.
 */
export interface OperationReport {
  /** The request's `X-Request-Id` if it sent a usable one, else a new UUID; echoed in the response. */
  requestId: string;
  /** The GraphQL endpoint that answered: `/graphql`, or `/subgraph` (a federation router's request). */
  endpoint: string;
  door: Door;
  /** The operation's name in its document (or the request's `operationName`); null if none. */
  operation: string | null;
  /** `query`, `mutation` or `subscription`; null when the document was not read. */
  type: string | null;
  /** The response's HTTP status; null over a WebSocket. */
  status: number | null;
  /** From the request's arrival to its response (a subscription: to its end). */
  ms: number;
  /** ok: no errors; partial: errors, and data in a root field; error: errors, no data. */
  outcome: 'ok' | 'partial' | 'error';
  /** The distinct `extensions.code` values of its errors, in order of appearance. */
  codes: string[];
  /** Its money, as `extensions` said it (a subscription: summed over its payloads). */
  credits: CreditExtensions;
  /** A subscription: the payloads it delivered. */
  payloads?: number;
  /** The trace the request belongs to (32 hex digits), when traces are on. */
  traceId?: string;
  /** True when a whole answer kept from an earlier request was sent, nothing run (`src/answers/`). */
  answered?: boolean;
}

/** A request id kept from the client: printable, no spaces or quotes, at most 128 characters. */
const REQUEST_ID = /^[\w.:/+=@-]{1,128}$/;

/** The client's `X-Request-Id` if it is usable, else a new UUID. */
export function requestIdOf(incoming: string | null | undefined): string {
  return incoming && REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

/** The distinct `extensions.code` values of errors, in order (`NONE` for a bare one). */
export function codesOf(errors: ExecutionResult['errors']): string[] {
  const codes = new Set<string>();
  for (const error of errors ?? []) {
    const code = error.extensions?.['code'];
    codes.add(typeof code === 'string' ? code : 'NONE');
  }
  return [...codes];
}

/** ok without errors; with errors, partial if a root field has data, else error. */
export function outcomeOf(result: ExecutionResult): OperationReport['outcome'] {
  if (!result.errors?.length) return 'ok';
  const data = result.data ?? {};
  return Object.values(data).some((value) => value !== null) ? 'partial' : 'error';
}
