import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Admission, KeptAdmission } from '../admission/admission.js';
import { newBooking, type DoorContext } from '../admission/door-context.js';
import { declaredLength, headerReader, withBody } from '../http/node-request.js';
import { wantsFresh } from '../context.js';
import { ESTIMATE_HEADER } from '../credits/budget-rules.js';
import { keptCredits, setCreditHeaders } from '../credits/credit-extensions.js';
import type { StoredAnswer } from '../upstream/page-cache/page-store.js';
import { answerKey } from './answer-key.js';
import { framedAnswer } from './framed-answer.js';
import type { KnownAnswers } from './known-answers.js';

/**
 * The handler the front stands before: node's request listener of the Yoga app, which takes what
 * the front resolved as its server context.
 */
export type RunListener = (
  request: IncomingMessage,
  response: ServerResponse,
  door?: DoorContext,
) => unknown;

/** What {@link serveKnownAnswers} needs besides the handler it stands in front of. */
export interface KnownAnswersFront {
  answers: KnownAnswers;
  /** The rules every request passes: the caller, the bounds, the budget and quota, the report. */
  admission: Admission;
  /** The GraphQL endpoint answers are kept for (`/graphql`). */
  path: string;
  /** True once the process has begun to shut down: then every request runs (and closes). */
  shuttingDown: () => boolean;
}

/** What the front decided: run the request with what it resolved, or send a kept answer. */
type Decision =
  | { run: true; door: DoorContext }
  | { run: false; door: DoorContext; answer: StoredAnswer; admitted: KeptAdmission };

/**
 * True for a request that may have a kept answer: a GET or a POST (its body sized, within the
 * limit) of the endpoint, not an estimate alone. One that asks for an answer in parts or an event
 * stream may have one too (`framedAnswer`); a subscription's never is (only queries are kept).
 */
function mayRepeat(request: IncomingMessage, front: KnownAnswersFront): boolean {
  const { method, url = '', headers } = request;
  if ((method !== 'GET' && method !== 'POST') || front.shuttingDown()) return false;
  if (url !== front.path && !url.startsWith(`${front.path}?`)) return false;
  if (headers.upgrade !== undefined || headers[ESTIMATE_HEADER] !== undefined) return false;
  if (method === 'GET') return true;
  const length = declaredLength(request);
  return length !== null && length > 0 && length <= front.admission.maxMessageBytes;
}

/**
 * Whether `request` gets a kept answer. Whatever it decides, what it resolved goes on with the
 * request (its caller or refusal, its body, its answer's slot), so that the run resolves none of
 * it again.
 */
async function decide(
  request: IncomingMessage,
  door: DoorContext,
  front: KnownAnswersFront,
): Promise<Decision> {
  const { admission, answers } = front;
  const headers = headerReader(request.headers);
  const caller = await admission.caller(headers);
  // Refused (the run answers it, with its reason), or without a key of its own to keep under.
  if (caller instanceof Error) {
    door.refused = caller;
    return { run: true, door };
  }
  door.caller = caller;
  const { upstreamKey } = caller;
  if (upstreamKey === null) return { run: true, door };
  const key = answerKey(upstreamKey, request, door.body ?? null, answers.version);
  door.answerSlot = { key, upstreamKey };
  // `Cache-Control: no-cache`: it runs, fetches every page again, and its answer replaces this one.
  if (wantsFresh(headers)) return { run: true, door };
  const answer = await answers.find(key);
  if (!answer) return { run: true, door };
  // Over its budget or its quota, it runs and is refused there, with its figures.
  const admitted = await admission.admitKept(caller, headers, answer.estimate);
  if (!admitted) return { run: true, door };
  return { run: false, door, answer, admitted };
}

/** Sends a kept answer with this request's own figures, as a run with every page cached would. */
function send(
  response: ServerResponse,
  requestId: string,
  answer: StoredAnswer,
  remaining: number | null,
  admitted: KeptAdmission,
): ReturnType<typeof keptCredits> {
  const extensions = keptCredits(answer, admitted.budget, remaining, admitted.quota);
  let type: string | undefined;
  for (const [name, value] of answer.headers) {
    response.setHeader(name, value);
    if (name === 'content-type') type = value;
  }
  const chunks = framedAnswer(type, answer.data, extensions);
  response.setHeader('x-request-id', requestId);
  setCreditHeaders({ set: (name, value) => response.setHeader(name, value) }, extensions.credits);
  response.setHeader(
    'content-length',
    chunks.reduce((length, chunk) => length + chunk.length, 0),
  );
  response.writeHead(200);
  // The writes in one (corked): the kept bytes are sent as they are, never copied.
  response.cork();
  for (const chunk of chunks) response.write(chunk);
  response.end();
  response.uncork();
  return extensions;
}

/**
 * Repeat views at the cost of a lookup: in front of the GraphQL handler `next`, a request that
 * asks exactly what an earlier one of the same workspace key asked ({@link answerKey}), while that
 * answer's pages are fresh, gets that answer's bytes: nothing parsed, validated or executed, no
 * upstream request. It is a door like the others: its caller, its budget and its quota are
 * decided by the admission (`Admission.caller`, `admitKept`), once; over its budget or quota it
 * runs and is refused there with the figures; it is reported as a run is. Its `extensions` are its
 * own and truthful: `used: 0`, `saved` what the answer cost, `remaining` the freshest known, its
 * budget and estimate, its quota. `Cache-Control: no-cache` runs and replaces the answer. Every
 * other request (and every answer with an error) runs, with what the front resolved (its caller,
 * its body, its answer's slot) in Yoga's server context.
 */
export function serveKnownAnswers(next: RunListener, front: KnownAnswersFront): RunListener {
  const answer = async (request: IncomingMessage, response: ServerResponse, door: DoorContext) => {
    let decision: Decision = { run: true, door };
    try {
      decision = await decide(request, door, front);
    } catch {
      // A store or quota that failed: the run is the safe answer.
    }
    if (decision.run) return next(request, response, decision.door);
    const { answer: kept, admitted } = decision;
    const booking = door.booking!;
    const remaining = front.answers.remaining(decision.door.caller!.upstreamKey!, kept);
    const credits = send(response, booking.requestId, kept, remaining, admitted);
    front.admission.report({
      requestId: booking.requestId,
      endpoint: front.path,
      door: 'answer',
      operation: kept.operation,
      type: 'query',
      status: 200,
      ms: performance.now() - booking.started,
      outcome: 'ok',
      codes: [],
      credits,
      answered: true,
    });
  };
  return (request, response) => {
    if (!mayRepeat(request, front)) return next(request, response);
    const door: DoorContext = {
      booking: newBooking(request.headers['x-request-id'] as string | undefined, front.path),
    };
    withBody(request, response, request.method !== 'GET', (body) => {
      if (body) door.body = body;
      return answer(request, response, door);
    });
  };
}
