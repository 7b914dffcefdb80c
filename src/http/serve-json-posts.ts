import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  getOperationAST,
  GraphQLError,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
} from 'graphql';
import { processRegularResult, type GraphQLParams, type YogaServerInstance } from 'graphql-yoga';
import type { Admission } from '../admission/admission.js';
import { newBooking, type DoorContext } from '../admission/door-context.js';
import type { HeaderReader } from '../auth/create-authenticator.js';
import { keepAnswer, noteAnswer, type AnswerRun } from '../answers/answer-keeping.js';
import type { KnownAnswers } from '../answers/known-answers.js';
import type { RunListener } from '../answers/serve-known-answers.js';
import { maskError } from '../errors.js';
import type { CorsPolicy } from './cors-policy.js';
import { isJsonType, parseJsonParams } from './json-params.js';
import { declaredLength, headerReader, withBody } from './node-request.js';
import { PRIVATE_CACHE_CONTROL, varyByCaller } from './private-answers.js';

/** The two media types of a whole JSON answer, in Yoga's order of preference. */
const JSON_TYPES = ['application/graphql-response+json', 'application/json'] as const;

/** What {@link serveJsonPosts} needs besides the Yoga it stands in front of. */
export interface JsonLane {
  /** The rules every request passes (the caller, the documents, the answer and its report). */
  admission: Admission;
  /** The GraphQL endpoint (`/graphql`). */
  path: string;
  cors: CorsPolicy;
  /** True once the process has begun to shut down: then every request goes to Yoga. */
  shuttingDown: () => boolean;
  /** Where a query's answer is kept for repeat views, when the front gave it a slot. */
  answers?: KnownAnswers;
}

/** The request as the GraphQL context reads it: what Yoga's `Request` gives the same readers. */
interface LaneRequest {
  readonly method: 'POST';
  readonly url: string;
  readonly headers: HeaderReader;
  readonly signal: AbortSignal;
}

/** The context of a run in the lane: the door's, with what Yoga would have added. */
type LaneContext = DoorContext & {
  request?: LaneRequest;
  params?: GraphQLParams;
  answerRun?: AnswerRun;
};

/** What Yoga's result processor answered, as the response it would have made. */
interface Answer {
  body: string | null;
  status: number;
  headers: Record<string, string>;
}

/** The `Response` Yoga's result processor builds, captured rather than built. */
class CapturedResponse implements Answer {
  readonly body: string | null;
  readonly status: number;
  readonly headers: Record<string, string>;
  constructor(body: string | null, init: { status?: number; headers?: Record<string, string> }) {
    this.body = body;
    this.status = init.status ?? 200;
    this.headers = init.headers ?? {};
  }
}
const CAPTURE = { Response: CapturedResponse } as unknown as Parameters<
  typeof processRegularResult
>[1];

/**
 * The media type Yoga's result processors would answer a whole result with, for `accept`, when it
 * is one of the JSON types (Yoga's `getMediaTypesForRequestInOrder` and `isMatchingMediaType`:
 * the header's types from last to first, each against the JSON types, the last match winning;
 * a type with a charset other than UTF-8 skipped). Null for a request that may be answered in
 * parts or as a stream, or not in JSON: those are Yoga's.
 */
export function acceptedJsonType(accept: string | undefined): string | null {
  const asked = (accept || '*/*').replace(/\s/g, '').toLowerCase();
  if (asked.includes('text/event-stream') || asked.includes('multipart/mixed')) return null;
  const types = asked.split(',');
  let chosen: string | null = null;
  for (let at = types.length - 1; at >= 0; at--) {
    const [type = '', ...params] = types[at]!.split(';');
    const charset = params.find((param) => param.includes('charset=')) ?? 'charset=utf-8';
    if (charset !== 'charset=utf-8') continue;
    const [pre, suf] = type.split('/');
    for (const offered of JSON_TYPES) {
      const [offeredPre, offeredSuf] = offered.split('/');
      if ((pre === '*' || pre === offeredPre) && (suf === '*' || suf === offeredSuf)) {
        chosen = offered;
      }
    }
  }
  return chosen;
}

/** The most `Accept` headers {@link knownAcceptType} keeps, and the longest it keeps. */
const KNOWN_ACCEPTS = 64;
const KNOWN_ACCEPT_LENGTH = 256;
const knownAccepts = new Map<string, string | null>();

/**
 * {@link acceptedJsonType}, kept for the first {@link KNOWN_ACCEPTS} headers of up to
 * {@link KNOWN_ACCEPT_LENGTH} characters: clients send the same few, and working one out again
 * took some 13 µs a request. The rest are worked out each time.
 */
function knownAcceptType(accept: string | undefined): string | null {
  if (accept === undefined || accept.length > KNOWN_ACCEPT_LENGTH) return acceptedJsonType(accept);
  let type = knownAccepts.get(accept);
  if (type === undefined) {
    type = acceptedJsonType(accept);
    if (knownAccepts.size < KNOWN_ACCEPTS) knownAccepts.set(accept, type);
  }
  return type;
}

/**
 * True for parameters Yoga's own checks would pass as they are (`useCheckGraphQLQueryParams`):
 * a query string, and nothing else but an operation name, variables and extensions of the right
 * types. Any other request is Yoga's, which answers it with its refusal.
 */
function plainParams(params: GraphQLParams): params is GraphQLParams & { query: string } {
  if (typeof params.query !== 'string') return false;
  for (const [name, value] of Object.entries(params)) {
    if (value == null || name === 'query') continue;
    if (name === 'operationName' ? typeof value !== 'string' : !isObject(value)) return false;
    if (name !== 'operationName' && name !== 'variables' && name !== 'extensions') return false;
  }
  return true;
}

/** True for a JSON object (not an array). */
function isObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The JSON type to answer a request the lane takes (a JSON POST of the endpoint, sized, answered
 * in JSON) in; null for a request it leaves to Yoga.
 */
function answerType(
  request: IncomingMessage,
  door: DoorContext | undefined,
  lane: JsonLane,
): string | null {
  const { method, url, headers } = request;
  if (method !== 'POST' || url !== lane.path || lane.shuttingDown()) return null;
  if (door?.refused || headers.upgrade !== undefined) return null;
  if (!isJsonType(headers['content-type'])) return null;
  const accept = knownAcceptType(headers.accept);
  if (accept === null || door?.body) return accept;
  const length = declaredLength(request);
  return length !== null && length > 0 && length <= lane.admission.maxMessageBytes ? accept : null;
}

/**
 * The HTTP door's plain JSON POSTs (what web apps, Relay, Apollo Client and the bench send), run
 * through Yoga's own envelop (`getEnveloped`: the same parse and validation, the same plugins,
 * the same execution) without Yoga's Fetch-API layer, which cost a bare Yoga a fifth to a third of
 * its CPU (BENCHMARKS.md, issue 39). It is an adapter like the others, with no rule of its own: the
 * caller and documents are `Admission.admitParams`, the answer and its report `Admission.answer`
 * and `answered`, the CORS and private headers `cors-policy.ts` and `private-answers.ts`, kept
 * answers `answer-keeping.ts`, the status and body Yoga's own `processRegularResult`.
 *
 * Everything else goes to Yoga (`next`), with what the lane resolved in its server context: GET,
 * multipart, forms, batches, `Accept` asking for parts or a stream, a body without a
 * `Content-Length`, a subscription; and any request that is refused before it runs (a caller, a
 * document, parameters Yoga's checks refuse, a syntax error), which Yoga answers with the same
 * refusal. With traces on, every request is Yoga's (its spans are made there).
 */
export function serveJsonPosts(
  yoga: Pick<YogaServerInstance<Record<string, unknown>, object>, 'getEnveloped' | 'logger'>,
  next: RunListener,
  lane: JsonLane,
): RunListener {
  /** Hands the request to Yoga with what was resolved, nothing of the lane's own. */
  const toYoga = (request: IncomingMessage, response: ServerResponse, door: LaneContext) => {
    const { caller, refused, body, answerSlot, booking } = door;
    return next(request, response, { caller, refused, body, answerSlot, booking });
  };

  async function run(
    request: IncomingMessage,
    response: ServerResponse,
    door: LaneContext,
    accept: string,
  ) {
    const headers = headerReader(request.headers);
    const { admission } = lane;
    let params: GraphQLParams;
    try {
      const parsed = parseJsonParams(door.body!);
      if (Array.isArray(parsed)) return toYoga(request, response, door);
      params = await admission.admitParams(door, parsed as GraphQLParams, headers, null);
    } catch {
      return toYoga(request, response, door);
    }
    if (!plainParams(params)) return toYoga(request, response, door);

    // As Yoga's `handleParams`: the request and its parameters in the context, then its envelop.
    const aborting = new AbortController();
    response.once('close', () => {
      if (!response.writableFinished) aborting.abort();
    });
    door.request = { method: 'POST', url: request.url!, headers, signal: aborting.signal };
    door.params = params;
    const enveloped = yoga.getEnveloped(door);
    let document: DocumentNode;
    let errors: readonly GraphQLError[];
    try {
      document = enveloped.parse(params.query);
      errors = enveloped.validate(enveloped.schema, document);
    } catch {
      return toYoga(request, response, door);
    }
    let result: ExecutionResult;
    if (errors.length > 0) {
      result = { errors };
    } else {
      const operation = getOperationAST(document, params.operationName);
      if (operation?.operation === 'subscription') return toYoga(request, response, door);
      result = await execute(door, params, enveloped, document);
    }
    send(response, door, result, accept, request.headers.origin);
  }

  async function execute(
    door: LaneContext,
    params: GraphQLParams,
    enveloped: ReturnType<typeof yoga.getEnveloped>,
    document: DocumentNode,
  ): Promise<ExecutionResult> {
    try {
      const args: ExecutionArgs = {
        schema: enveloped.schema,
        document,
        contextValue: await enveloped.contextFactory(),
        variableValues: params.variables,
        operationName: params.operationName,
      };
      return (await enveloped.execute(args)) as ExecutionResult;
    } catch (error) {
      // As Yoga answers an operation that threw: masked, and logged when it was not a client's.
      const masked = maskError(error, 'Unexpected error.', false);
      if (masked !== error) yoga.logger.error(error);
      const graphQLError =
        masked instanceof GraphQLError
          ? masked
          : new GraphQLError(masked.message, { originalError: masked });
      return { errors: [graphQLError] };
    }
  }

  function send(
    response: ServerResponse,
    door: LaneContext,
    executed: ExecutionResult,
    accept: string,
    origin: string | undefined,
  ): void {
    const { admission, cors, answers } = lane;
    // Not a whole result (none is, answered in JSON): Yoga's processor refuses it (406).
    const whole = !(Symbol.asyncIterator in executed);
    const result = whole ? admission.answer(door.booking, executed) : executed;
    if (whole) noteAnswer(door, result);
    const answer = processRegularResult(result, CAPTURE, accept) as unknown as Answer;
    const headers = new Map<string, string>();
    for (const [name, value] of Object.entries(answer.headers)) {
      headers.set(name.toLowerCase(), value);
    }
    const allowed = cors.allowOrigin(origin);
    if (allowed) {
      for (const [name, value] of Object.entries(allowed)) headers.set(name, value);
      headers.set('access-control-expose-headers', cors.expose);
    }
    const set = { set: (name: string, value: string) => headers.set(name, value) };
    if (door.booking) admission.answered(door.booking, answer.status, set);
    headers.set('cache-control', PRIVATE_CACHE_CONTROL);
    headers.set('vary', varyByCaller(headers.get('vary')));
    if (lane.shuttingDown()) headers.set('connection', 'close');
    const run = door.answerRun;
    if (run && answers) keepAnswer(answers, run, answer.status, headers, run.data);
    const body = answer.body === null ? null : Buffer.from(answer.body);
    if (body) headers.set('content-length', String(body.length));
    response.writeHead(answer.status, Object.fromEntries(headers));
    response.end(body);
  }

  return (request, response, given) => {
    const accept = answerType(request, given, lane);
    if (accept === null) return next(request, response, given);
    const door: LaneContext = given ?? {
      booking: newBooking(request.headers['x-request-id'] as string | undefined, lane.path),
    };
    withBody(request, response, !door.body, (body) => {
      if (body) door.body = body;
      return run(request, response, door, accept);
    });
  };
}
