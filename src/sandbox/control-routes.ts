import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FaultShares, Latency, ScriptedFault } from './faults.js';
import type { Counters, RequestLogEntry } from './request-log.js';
import { errorBody, sendJson } from './request-handler.js';

/** The test controls a sandbox can expose over HTTP. */
export interface SandboxControls {
  requestLog(): RequestLogEntry[];
  counters(): Counters;
  reset(): void;
  setLatency(latency: Latency): void;
  setFaults(faults: FaultShares): void;
  /** Queues faults for the coming /v1 requests, one each, before any drawn by the shares. */
  scriptFaults(faults: readonly ScriptedFault[]): void;
}

function numbers(query: string, names: readonly string[]): Record<string, number> {
  const result: Record<string, number> = {};
  for (const [name, raw] of new URLSearchParams(query)) {
    if (!names.includes(name))
      throw new RangeError(`unknown parameter "${name}" (allowed: ${names.join(', ')})`);
    const value = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(value))
      throw new RangeError(`${name} must be a number (got "${raw}")`);
    result[name] = value;
  }
  return result;
}

/**
 * Creates the handler of `/__sandbox/...`: `GET log`, `GET counters`,
 * `POST reset`, `POST latency?fixedMs=&jitterMs=`,
 * `POST faults?serverError=&drop=&malformed=&tooManyRequests=`. Answers need no
 * API key and are not logged; bad values give 400 INVALID_INPUT.
 */
export function createControlRoutes(
  controls: SandboxControls,
): (req: IncomingMessage, res: ServerResponse, path: string, query: string) => void {
  const routes: Record<string, (query: string) => object> = {
    'GET /__sandbox/log': () => ({ entries: controls.requestLog() }),
    'GET /__sandbox/counters': () => controls.counters(),
    'POST /__sandbox/reset': () => {
      controls.reset();
      return {};
    },
    'POST /__sandbox/latency': (query) => {
      controls.setLatency(numbers(query, ['fixedMs', 'jitterMs']));
      return {};
    },
    'POST /__sandbox/faults': (query) => {
      controls.setFaults(numbers(query, ['serverError', 'drop', 'malformed', 'tooManyRequests']));
      return {};
    },
  };
  return (req, res, path, query) => {
    const route = `${req.method ?? 'GET'} ${path}`;
    const requestId = randomUUID();
    const action = routes[route];
    if (!action) {
      sendJson(res, 404, errorBody('NOT_FOUND', `no such control: ${route}`, requestId));
      return;
    }
    try {
      sendJson(res, 200, JSON.stringify({ success: true, ...action(query) }));
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      sendJson(res, 400, errorBody('INVALID_INPUT', message, requestId));
    }
  };
}
