/** One request as the sandbox saw it. Never holds the API key. */
export interface RequestLogEntry {
  method: string;
  path: string;
  /** The list endpoint's path (e.g. `/v1/companies`), null for unknown paths. */
  endpoint: string | null;
  /** The raw query string, without the leading `?`. */
  query: string;
  params: Record<string, string[]>;
  /** The workspace id (e.g. `ws_demo`), never the key; null when no key was accepted. */
  workspace: string | null;
  /** The W3C `traceparent` header the request carried (a traced client's), else null. */
  traceparent: string | null;
  /** The HTTP status; 0 when the connection was dropped by fault injection. */
  status: number;
  /** The error code, null on success. */
  code: string | null;
  /** Records returned (and credits charged). */
  records: number;
  /** The injected fault, if any. */
  fault: FaultKind | null;
  /** Server time spent on the request in milliseconds, excluding added latency. */
  serverMs: number;
  /** Receive time, milliseconds since the Unix epoch. */
  at: number;
}

/** The kinds of injected faults. */
export type FaultKind = 'serverError' | 'drop' | 'malformed' | 'tooManyRequests' | 'hang';

/** Totals since start or the last reset. */
export interface Counters {
  requests: number;
  records: number;
  byEndpoint: Record<string, number>;
  byStatus: Record<string, number>;
}

/** Entries kept at most; the oldest are dropped first (counters keep counting). */
export const LOG_CAPACITY = 100_000;

/** The request log and counters of one sandbox. */
export class RequestLog {
  #entries: RequestLogEntry[] = [];
  #counters: Counters = RequestLog.#empty();

  static #empty(): Counters {
    return { requests: 0, records: 0, byEndpoint: {}, byStatus: {} };
  }

  add(entry: RequestLogEntry): void {
    // Drop the oldest tenth at once when full, so a long run does not shift the array per request.
    if (this.#entries.length >= LOG_CAPACITY) this.#entries.splice(0, LOG_CAPACITY / 10);
    this.#entries.push(entry);
    const c = this.#counters;
    c.requests += 1;
    c.records += entry.records;
    const endpoint = entry.endpoint ?? 'unknown';
    c.byEndpoint[endpoint] = (c.byEndpoint[endpoint] ?? 0) + 1;
    const status = String(entry.status);
    c.byStatus[status] = (c.byStatus[status] ?? 0) + 1;
  }

  /** A copy of the entries, oldest first. */
  entries(): RequestLogEntry[] {
    return this.#entries.map((entry) => ({ ...entry, params: structuredClone(entry.params) }));
  }

  /** A copy of the counters. */
  counters(): Counters {
    return structuredClone(this.#counters);
  }

  clear(): void {
    this.#entries = [];
    this.#counters = RequestLog.#empty();
  }
}
