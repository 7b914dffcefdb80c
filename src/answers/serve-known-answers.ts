import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Authenticate, Caller, HeaderReader } from '../auth/create-authenticator.js';
import type { Config } from '../config.js';
import { wantsFresh } from '../context.js';
import { BUDGET_HEADER, budgetOf, ESTIMATE_HEADER } from '../plugins/use-credit-budget.js';
import {
  quotaFigures,
  setCreditHeaders,
  type CreditExtensions,
} from '../plugins/use-credits-extension.js';
import {
  report as quotaReport,
  type CreditQuotaOptions,
  type QuotaReport,
} from '../plugins/use-credit-quota.js';
import { requestIdOf, type OperationReport } from '../plugins/use-operation-report.js';
import type { StoredAnswer } from '../upstream/page-cache/page-store.js';
import { answerKey } from './answer-key.js';
import { ANSWER_OPEN, answerTail, type KnownAnswers } from './known-answers.js';

/** What {@link serveKnownAnswers} needs besides the handler it stands in front of. */
export interface KnownAnswersFront {
  answers: KnownAnswers;
  authenticate: Authenticate;
  config: Pick<
    Config,
    'creditBudgetDefault' | 'creditBudgetMax' | 'creditQuota' | 'maxRequestBytes'
  >;
  /** The credit quotas, when any principal can have one. */
  quotas?: CreditQuotaOptions;
  /** The GraphQL endpoint answers are kept for (`/graphql`). */
  path: string;
  /** Where a repeat's operation line and metrics go, as a run's do. */
  report: (report: OperationReport) => void;
  /** True once the process has begun to shut down: then every request runs (and closes). */
  shuttingDown: () => boolean;
}

/** What the front decided: run the request, or send a kept answer. */
type Decision =
  | { run: true }
  | {
      run: false;
      answer: StoredAnswer;
      remaining: number | null;
      budget: number;
      quota: QuotaReport | null;
    };

const RUN: Decision = { run: true };
const DATA_OPEN = Buffer.from(ANSWER_OPEN);

/**
 * True for a request that may have a kept answer: a GET or a POST (its body sized, within the
 * limit) of the endpoint, not a subscription's stream, not an estimate alone.
 */
function mayRepeat(request: IncomingMessage, front: KnownAnswersFront): boolean {
  const { method, url = '', headers } = request;
  if ((method !== 'GET' && method !== 'POST') || front.shuttingDown()) return false;
  if (url !== front.path && !url.startsWith(`${front.path}?`)) return false;
  if (headers.upgrade !== undefined || headers[ESTIMATE_HEADER] !== undefined) return false;
  const accept = headers.accept ?? '';
  if (accept.includes('text/event-stream') || accept.includes('multipart/mixed')) return false;
  if (method === 'GET') return true;
  const length = Number(headers['content-length']);
  return length > 0 && length <= front.config.maxRequestBytes;
}

/** Node's request headers read as a Fetch `Headers` is (names in any case), without copying them. */
function headerReader(headers: IncomingMessage['headers']): HeaderReader {
  return {
    get(name) {
      const value = headers[name.toLowerCase()];
      return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
    },
    has: (name) => headers[name.toLowerCase()] !== undefined,
  };
}

/** The body of a request whose length is known and bounded. */
function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    request.once('error', reject);
  });
}

/**
 * The caller's quota for a repeat that costs nothing: admitted as a run is (its estimate must fit
 * what is left), then given back whole at once. Null without a quota; false when it does not fit
 * (the run refuses it, with its figures).
 */
async function admitFree(
  front: KnownAnswersFront,
  caller: Caller,
  estimate: number,
): Promise<QuotaReport | null | false> {
  const quota = caller.quota ?? front.config.creditQuota;
  if (!front.quotas || caller.principal === null || quota === null) return null;
  const { store, observer } = front.quotas;
  const held = await store.reserve(caller.principal, quota, estimate);
  if (!held.admitted) return false;
  observer.reserved(estimate);
  if (estimate > 0) observer.refunded(estimate);
  return quotaReport(quota, await held.heldBy.settle(caller.principal, quota, estimate));
}

/** Whether `request` gets a kept answer; reserves a slot for its answer when it runs. */
async function decide(
  request: IncomingMessage,
  body: Buffer | null,
  front: KnownAnswersFront,
): Promise<Decision> {
  const headers = headerReader(request.headers);
  let caller: Caller;
  try {
    caller = await front.authenticate(headers);
  } catch {
    // Refused, or the keys could not be fetched: the run answers it, with its reason.
    return RUN;
  }
  const { upstreamKey } = caller;
  if (upstreamKey === null) return RUN;
  const key = answerKey(upstreamKey, request, body, front.answers.schemaVersion);
  front.answers.reserve(request, { key, upstreamKey });
  // `Cache-Control: no-cache`: it runs, fetches every page again, and its answer replaces this one.
  if (wantsFresh(headers)) return RUN;
  const answer = await front.answers.find(key);
  if (!answer) return RUN;
  const { creditBudgetDefault, creditBudgetMax } = front.config;
  const budget = budgetOf(
    headers.get(BUDGET_HEADER),
    { maxBudget: creditBudgetMax },
    creditBudgetDefault,
  );
  // A bad budget, or one below the estimate: the run refuses it as it would any request.
  if (typeof budget !== 'number' || answer.estimate > budget) return RUN;
  const quota = await admitFree(front, caller, answer.estimate);
  if (quota === false) return RUN;
  const remaining = front.answers.remaining(upstreamKey, answer);
  return { run: false, answer, remaining, budget, quota };
}

/** Sends a kept answer with this request's own figures, as a run with every page cached would. */
function send(
  request: IncomingMessage,
  response: ServerResponse,
  decision: Extract<Decision, { run: false }>,
): string {
  const { answer, remaining, budget, quota } = decision;
  const extensions: CreditExtensions = {
    credits: {
      used: 0,
      saved: answer.credits,
      remaining,
      estimate: answer.estimate,
      budget,
      ...(quota ? { quota: quotaFigures(quota) } : {}),
    },
    upstreamRequests: 0,
    upstreamRetries: 0,
  };
  const tail = Buffer.from(answerTail(extensions));
  const requestId = requestIdOf(request.headers['x-request-id'] as string | undefined);
  for (const [name, value] of answer.headers) response.setHeader(name, value);
  response.setHeader('x-request-id', requestId);
  setCreditHeaders({ set: (name, value) => response.setHeader(name, value) }, extensions.credits);
  response.setHeader('content-length', DATA_OPEN.length + answer.data.length + tail.length);
  response.writeHead(200);
  // Three writes in one (corked): the kept bytes are sent as they are, never copied.
  response.cork();
  response.write(DATA_OPEN);
  response.write(answer.data);
  response.end(tail);
  response.uncork();
  return requestId;
}

/**
 * Repeat views at the cost of a lookup: in front of the GraphQL handler `next`, a request that
 * asks exactly what an earlier one of the same workspace key asked ({@link answerKey}), while that
 * answer's pages are fresh, gets that answer's bytes: nothing parsed, validated or executed, no
 * upstream request. Its `extensions` are its own and truthful: `used: 0`, `saved` what the answer
 * cost, `remaining` the freshest known, its budget and estimate, its quota. It is admitted as a
 * run would be: authenticated first; over its budget, or its quota, it runs and is refused there
 * with the figures. `Cache-Control: no-cache` runs and replaces the answer. Every other request
 * (and every answer with an error) runs; a POST's body, read here, is handed on with it.
 */
export function serveKnownAnswers(
  next: RequestListener,
  front: KnownAnswersFront,
): RequestListener {
  const answer = async (
    request: IncomingMessage,
    response: ServerResponse,
    body: Buffer | null,
    started: number,
  ) => {
    let decision = RUN;
    try {
      decision = await decide(request, body, front);
    } catch {
      // A store or quota that failed: the run is the safe answer.
    }
    if (decision.run) return next(request, response);
    const requestId = send(request, response, decision);
    const { answer: kept } = decision;
    front.report({
      requestId,
      endpoint: front.path,
      operation: kept.operation,
      status: 200,
      ms: performance.now() - started,
      outcome: 'ok',
      codes: [],
      upstreamRequests: 0,
      upstreamRetries: 0,
      creditsUsed: 0,
      creditsSaved: kept.credits,
      creditsUncertain: 0,
      creditsEstimate: kept.estimate,
      stalePages: 0,
      answered: true,
    });
  };
  return (request, response) => {
    if (!mayRepeat(request, front)) return next(request, response);
    const started = performance.now();
    // A body that breaks off, or anything thrown past the run's own handling: the connection is
    // closed, never left hanging, and nothing is left unhandled.
    const fail = () => response.destroy();
    if (request.method === 'GET') {
      answer(request, response, null, started).catch(fail);
      return;
    }
    readBody(request)
      .then((body) => {
        // The run reads the body from here: whatwg-node takes a request's `body` when set.
        (request as IncomingMessage & { body?: Buffer }).body = body;
        return answer(request, response, body, started);
      })
      .catch(fail);
  };
}
