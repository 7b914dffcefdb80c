import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Acquisition, ExecMove, FundingEvent } from './dataset/records.js';
import type { LiveEvent } from './event-feed.js';
import type { FaultShares, Latency, ScriptedFault } from './faults.js';
import type { NewAcquisition, NewEvent, NewExecMove, NewFundingEvent } from './parse-new-events.js';
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
  /**
   * Adds events to the running sandbox: one new event or a list, each `count` times (1..1000 in
   * all), drawn as the seeded ones are, with the fields given. They are served at once, like
   * the seeded ones, until `reset`. Returns the records made, as the list endpoints answer them.
   *
   * @throws RangeError naming the field at fault (then nothing is added).
   */
  addEvents(event: NewFundingEvent): FundingEvent[];
  addEvents(event: NewExecMove): ExecMove[];
  addEvents(event: NewAcquisition): Acquisition[];
  addEvents(events: NewEvent | readonly NewEvent[]): LiveEvent[];
}

/** The largest body a control request may send. */
const MAX_BODY_BYTES = 1_000_000;

function noQuery(query: string, route: string): void {
  if (query !== '') throw new RangeError(`${route} takes a JSON body, not query parameters`);
}

function json(body: string): unknown {
  try {
    return JSON.parse(body) as unknown;
  } catch (error) {
    throw new RangeError(
      `the body must be JSON such as {"kind":"fundingEvent"} (${error instanceof Error ? error.message : String(error)})`,
    );
  }
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
 * `POST faults?serverError=&drop=&malformed=&tooManyRequests=`, `POST events` (JSON body:
 * one new event or a list; answers `{ success: true, data: [records] }`). Answers need no
 * API key and are not logged; bad values give 400 INVALID_INPUT.
 */
export function createControlRoutes(
  controls: SandboxControls,
): (req: IncomingMessage, res: ServerResponse, path: string, query: string) => void {
  const routes: Record<string, (query: string, body: string) => object> = {
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
    'POST /__sandbox/events': (query, body) => {
      noQuery(query, 'POST /__sandbox/events');
      return { data: controls.addEvents(json(body) as NewEvent) };
    },
  };
  return (req, res, path, query) => {
    const route = `${req.method ?? 'GET'} ${path}`;
    const requestId = randomUUID();
    const action = routes[route];
    if (!action) {
      req.resume();
      sendJson(res, 404, errorBody('NOT_FOUND', `no such control: ${route}`, requestId));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => {
      try {
        if (size > MAX_BODY_BYTES)
          throw new RangeError(`the body must be at most ${MAX_BODY_BYTES} bytes (got ${size})`);
        const body = Buffer.concat(chunks).toString('utf8');
        sendJson(res, 200, JSON.stringify({ success: true, ...action(query, body) }));
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        sendJson(res, 400, errorBody('INVALID_INPUT', message, requestId));
      }
    });
  };
}
