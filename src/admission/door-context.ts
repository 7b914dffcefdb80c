import type { ExecutionResult, GraphQLError } from 'graphql';
import type { Caller } from '../auth/create-authenticator.js';
import type { CreditExtensions } from '../credits/credit-extensions.js';
import type { AnswerParts } from '../incremental/answer-parts.js';
import type { RequestTrace } from '../tracing/request-tracer.js';
import { requestIdOf, type Door } from './operation-report.js';
import type { ConnectionCount } from './subscription-counts.js';

/** Where a query's whole answer is kept for repeat views (`src/answers/`), from the front. */
export interface AnswerSlot {
  /** The answer's name (`answerKey`). */
  readonly key: string;
  /** The caller's upstream key, for the freshest `remaining` of its workspace. */
  readonly upstreamKey: string;
}

/** One request as the report books it: set once, by the first door that sees it. */
export interface Booking {
  /** Its `X-Request-Id`: the client's if usable, else a new one. */
  readonly requestId: string;
  /** When it arrived (`performance.now()`). */
  readonly started: number;
  /** The GraphQL endpoint it came to (`/graphql`, `/subgraph`). */
  readonly endpoint: string;
  /** The door it came in by. */
  readonly door: Door;
  /** Its operation's name, once known (the request's `operationName`, then its document's). */
  operation: string | null;
  /** Its operation's type, once its document was read. */
  type: string | null;
  /**
   * Its result, once ready (a single one: a subscription's stream is reported when it ends; an
   * answer in parts, once it ends, as its payloads came to).
   */
  result?: ExecutionResult;
  /** A query answered in parts (`@defer`, `@stream`): its payloads, and when they end. */
  parts?: AnswerParts;
  /** What its execution came to, as its `extensions` say (absent: it never ran). */
  credits?: CreditExtensions;
  /** Its traces, when traces are on. */
  trace?: RequestTrace;
}

/**
 * What Yoga's server context carries for one request (the GraphQL context is that same object,
 * extended): what the door that took it already resolved, so that nothing is resolved twice, and
 * the request's own state. A door passes these to Yoga (`app(req, res, { caller, body, ... })`,
 * `getEnveloped({ caller, ... })`); nothing is kept beside the request.
 */
export interface DoorContext {
  /** The caller, as a door resolved it (the front; a WebSocket connection). */
  caller?: Caller;
  /** The caller's refusal, as the front resolved it: answered as it is. */
  refused?: GraphQLError;
  /** The body a door already read (the front reads a POST's): parsed from here. */
  body?: Buffer;
  /** Where a query's answer is kept for repeat views, when the front gave it a slot. */
  answerSlot?: AnswerSlot;
  /** The WebSocket connection's count of open subscriptions, over a WebSocket. */
  connection?: ConnectionCount;
  /** The request's booking, for its report and headers. */
  booking?: Booking;
  /**
   * An alert's subscription: where it resumes (the `discoveredAt` of the last record it took),
   * over the `since` of its document.
   */
  resumeFrom?: string;
}

/**
 * The booking of a request to `endpoint`, made by the first door that saw it (the front, or
 * Yoga's `onRequest`), with the client's `X-Request-Id` if it is usable.
 */
export function bookingOf(door: DoorContext, request: Request, endpoint: string): Booking {
  door.booking ??= newBooking(request.headers.get('x-request-id'), endpoint);
  return door.booking;
}

/** A new booking of an HTTP request to `endpoint`, arriving now with `X-Request-Id: requestId`. */
export function newBooking(requestId: string | null | undefined, endpoint: string): Booking {
  return {
    requestId: requestIdOf(requestId),
    started: performance.now(),
    endpoint,
    door: 'http',
    operation: null,
    type: null,
  };
}
