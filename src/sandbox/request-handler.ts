import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from './api-error.js';
import type { CursorCodec } from './cursor-codec.js';
import type { FaultInjector, ScriptedFault } from './faults.js';
import type { ListEndpoint } from './list-endpoint.js';
import { parseParams } from './parse-params.js';
import type { FaultKind, RequestLog, RequestLogEntry } from './request-log.js';
import type { Workspace, Workspaces } from './workspaces.js';

/** What the handler works with. */
export interface HandlerDeps {
  readonly endpoints: ReadonlyMap<string, ListEndpoint>;
  readonly workspaces: Workspaces;
  readonly log: RequestLog;
  readonly faults: FaultInjector;
  readonly codec: CursorCodec;
  /** Answers `/__sandbox/...` requests; null when the controls are not exposed over HTTP. */
  readonly controls:
    ((req: IncomingMessage, res: ServerResponse, path: string, query: string) => void) | null;
  readonly quiet: boolean;
}

interface Outcome {
  status: number;
  body: string;
  headers: Record<string, string>;
  code: string | null;
  records: number;
  workspace: string | null;
  fault: FaultKind | null;
}

const REDACTED = '[redacted]';
const MALFORMED_BODY = '{"success":true,"data":[{"id":"';

/** Writes a complete JSON response. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(body);
}

/** The spec's error envelope (section 7). */
export function errorBody(code: string, message: string, requestId: string): string {
  return JSON.stringify({ success: false, error: { code, message }, meta: { requestId } });
}

function errorOutcome(error: ApiError, requestId: string, workspace: Workspace | null): Outcome {
  const headers: Record<string, string> = { 'x-request-id': requestId };
  if (error.retryAfterSeconds !== undefined)
    headers['retry-after'] = String(error.retryAfterSeconds);
  return {
    status: error.status,
    body: errorBody(error.code, error.message, requestId),
    headers,
    code: error.code,
    records: 0,
    workspace: workspace?.id ?? null,
    fault: null,
  };
}

function headerValue(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Serves one list request: auth, rate limit, validation, credits, in that order. */
function serveList(
  deps: HandlerDeps,
  endpoint: ListEndpoint,
  req: IncomingMessage,
  query: string,
  requestId: string,
): Outcome {
  let workspace: Workspace | null = null;
  try {
    workspace = deps.workspaces.authenticate(headerValue(req, 'x-api-key'));
    deps.workspaces.admit(workspace, Date.now());
    const parsed = parseParams(new URLSearchParams(query), endpoint.rules);
    const after =
      parsed.cursor === null
        ? null
        : deps.codec.decode(parsed.cursor, endpoint.path, parsed.canonical);
    const plan = endpoint.plan(parsed.values);
    if (workspace.credits <= 0) {
      throw new ApiError(
        'PAYMENT_REQUIRED',
        'the workspace has no credits remaining (one credit per returned record)',
      );
    }
    const page = plan.page(after, Math.min(parsed.limit, workspace.credits));
    workspace.credits -= page.records.length;
    const nextCursor =
      page.hasMore && page.last !== null
        ? deps.codec.encode(endpoint.path, parsed.canonical, page.last)
        : null;
    const body = JSON.stringify({
      success: true,
      data: page.records,
      pagination: { hasMore: page.hasMore, nextCursor },
      meta: {
        endpoint: endpoint.path,
        creditsUsed: page.records.length,
        creditsRemaining: workspace.credits,
      },
    });
    return {
      status: 200,
      body,
      headers: { 'x-request-id': requestId },
      code: null,
      records: page.records.length,
      workspace: workspace.id,
      fault: null,
    };
  } catch (error) {
    if (error instanceof ApiError) return errorOutcome(error, requestId, workspace);
    throw error;
  }
}

function faultOutcome(injected: ScriptedFault, requestId: string): Outcome {
  const fault = injected.kind;
  switch (injected.kind) {
    case 'serverError': {
      const outcome = errorOutcome(
        new ApiError('INTERNAL_ERROR', 'injected server error'),
        requestId,
        null,
      );
      return { ...outcome, status: injected.status ?? outcome.status, fault };
    }
    case 'tooManyRequests': {
      const seconds = injected.retryAfter ?? 1;
      return {
        ...errorOutcome(
          new ApiError(
            'TOO_MANY_REQUESTS',
            `injected rate limit: retry after ${seconds} s`,
            seconds,
          ),
          requestId,
          null,
        ),
        fault,
      };
    }
    case 'malformed':
      return {
        status: 200,
        body: MALFORMED_BODY,
        headers: { 'x-request-id': requestId },
        code: null,
        records: 0,
        workspace: null,
        fault,
      };
    case 'hang':
    case 'drop':
      return { status: 0, body: '', headers: {}, code: null, records: 0, workspace: null, fault };
  }
}

/** Replaces any query value that is an API key, so keys never reach the log. */
function redact(
  deps: HandlerDeps,
  query: string,
): { query: string; params: Record<string, string[]> } {
  const search = new URLSearchParams(query);
  let leaked = false;
  const params: Record<string, string[]> = {};
  for (const [name, value] of search) {
    const safe = deps.workspaces.isKey(value) ? REDACTED : value;
    if (safe !== value) leaked = true;
    (params[name] ??= []).push(safe);
  }
  if (!leaked) return { query, params };
  const clean = new URLSearchParams();
  for (const [name, values] of Object.entries(params))
    for (const value of values) clean.append(name, value);
  return { query: clean.toString(), params };
}

/**
 * Creates the node:http request listener of the sandbox: the five /v1 list
 * endpoints, the optional /__sandbox controls, and 404/405 for anything else.
 * Faults and latency apply to /v1 requests only; faults charge no credits.
 */
export function createRequestHandler(
  deps: HandlerDeps,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const started = process.hrtime.bigint();
    const at = Date.now();
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const query = q === -1 ? '' : url.slice(q + 1);
    const method = req.method ?? 'GET';

    if (path.startsWith('/__sandbox/') && deps.controls) {
      deps.controls(req, res, path, query);
      return;
    }

    const requestId = randomUUID();
    const endpoint = deps.endpoints.get(path) ?? null;
    let outcome: Outcome;
    let delay = 0;
    try {
      if (!endpoint) {
        outcome = errorOutcome(
          new ApiError('NOT_FOUND', `no such endpoint: ${method} ${path}`),
          requestId,
          null,
        );
      } else if (method !== 'GET') {
        outcome = errorOutcome(
          new ApiError('METHOD_NOT_ALLOWED', `${path} only answers GET (got ${method})`),
          requestId,
          null,
        );
        outcome.headers.allow = 'GET';
      } else {
        const fault = deps.faults.drawFault();
        outcome = fault
          ? faultOutcome(fault, requestId)
          : serveList(deps, endpoint, req, query, requestId);
        delay = fault?.kind === 'hang' ? fault.ms : deps.faults.drawDelay();
      }
    } catch (error) {
      if (!deps.quiet) console.error('sandbox: internal error', error);
      outcome = errorOutcome(
        new ApiError('INTERNAL_ERROR', 'internal sandbox error'),
        requestId,
        null,
      );
    }

    const serverMs = Number(process.hrtime.bigint() - started) / 1e6;
    const safe = redact(deps, query);
    const entry: RequestLogEntry = {
      method,
      path,
      endpoint: endpoint?.path ?? null,
      query: safe.query,
      params: safe.params,
      workspace: outcome.workspace,
      traceparent: headerValue(req, 'traceparent') ?? null,
      status: outcome.status,
      code: outcome.code,
      records: outcome.records,
      fault: outcome.fault,
      serverMs,
      at,
    };
    deps.log.add(entry);
    if (!deps.quiet) {
      const shown = safe.query === '' ? path : `${path}?${safe.query}`;
      console.log(
        `${method} ${shown} ${outcome.status}${outcome.code ? ` ${outcome.code}` : ''} ${outcome.records} records ${serverMs.toFixed(2)} ms ${outcome.workspace ?? '-'}${outcome.fault ? ` fault=${outcome.fault}` : ''}`,
      );
    }

    const finish = (): void => {
      if (outcome.fault === 'drop' || outcome.fault === 'hang') {
        req.socket.destroy();
        return;
      }
      sendJson(res, outcome.status, outcome.body, outcome.headers);
    };
    if (delay > 0) setTimeout(finish, delay);
    else finish();
  };
}
