import type { PageParams } from './build-query.js';
import { CreditBudget } from './credit-budget.js';
import { CreditLedger } from './credit-ledger.js';
import type { EndpointName, EndpointRecords } from './endpoints.js';
import { Semaphore } from './semaphore.js';
import type { ListEnvelope, UpstreamRecord } from './types.js';
import type { UpstreamCall } from './upstream-call.js';
import { UpstreamError, unavailable } from './upstream-error.js';

/** Told of every page the upstream returns in a session, e.g. to remember the records it carries. */
export type PageListener = (
  endpoint: EndpointName,
  data: readonly (UpstreamRecord | null)[],
) => void;

/** Options of {@link UpstreamSession}. */
export interface SessionOptions {
  /** The shared upstream pipeline. */
  call: UpstreamCall;
  /** The caller's key, or null when the request carried none. */
  apiKey: string | null;
  /** Upstream requests this operation may have in flight at once. */
  concurrency: number;
  /**
   * Aborts the operation's requests, e.g. when the client disconnects: those in flight are
   * cancelled and no further one is sent.
   */
  signal?: AbortSignal;
  /** Fetch fresh pages, not cached ones (`Cache-Control: no-cache`). */
  fresh?: boolean;
  /**
   * The operation's deadline (`OPERATION_TIMEOUT_MS`), counted from its first upstream request:
   * then its requests in flight are aborted and the fields still open fail OPERATION_TIMEOUT.
   */
  deadlineMs?: number;
}

/** The abort reason when the operation's deadline passes. */
class OperationDeadline extends Error {
  override readonly name = 'OperationDeadline';
}

/** A page request: paging, plus the records at its start the caller will drop. */
export interface SessionPage extends PageParams {
  /** Records at the start of the page the caller will drop (default 0); see `CreditBudget`. */
  skip?: number;
}

/**
 * The caller's view of the upstream for one GraphQL operation: it holds the caller's key, makes
 * each distinct request (endpoint + normalised query) at most once, keeps at most `concurrency`
 * requests in flight, and carries the ledger the transport books into and the budget that stops
 * the spending. Made per request, never shared.
 */
export class UpstreamSession {
  readonly ledger = new CreditLedger();
  readonly budget = new CreditBudget();
  readonly #options: SessionOptions;
  readonly #slots: Semaphore;
  readonly #pages = new Map<string, Promise<ListEnvelope<UpstreamRecord>>>();
  readonly #inFlight = new Set<Promise<unknown>>();
  readonly #listeners: PageListener[] = [];
  /** Aborts this operation's requests: when the client goes away, or at the deadline. */
  #controller: AbortController | null = null;
  #deadline: NodeJS.Timeout | undefined;
  /** When the deadline passes (ms since the epoch), once the first request started it. */
  #deadlineAt: number | undefined;

  constructor(options: SessionOptions) {
    this.#options = options;
    this.#slots = new Semaphore(options.concurrency);
  }

  /** Calls `listener` with every page this session receives from now on. */
  onPage(listener: PageListener): void {
    this.#listeners.push(listener);
  }

  /**
   * One page of `endpoint`; the same page asked twice in this operation is fetched once.
   * Rejects with an `UpstreamError`.
   */
  page<E extends EndpointName>(
    endpoint: E,
    filterQuery: string,
    page: SessionPage,
  ): Promise<ListEnvelope<EndpointRecords[E]>> {
    const cursor = page.cursor ?? null;
    const key = `${endpoint}?${filterQuery}\n${cursor ?? ''}\n${page.limit}`;
    let pending = this.#pages.get(key);
    if (!pending) {
      const request = this.#fetch(endpoint, filterQuery, cursor, page.limit, page.skip ?? 0);
      this.#pages.set(key, request);
      this.#inFlight.add(request);
      const done = () => this.#inFlight.delete(request);
      request.then(done, done);
      pending = request;
    }
    return pending as Promise<ListEnvelope<EndpointRecords[E]>>;
  }

  /** Ends the operation: its deadline no longer runs. Called once its result is complete. */
  finish(): void {
    clearTimeout(this.#deadline);
  }

  /**
   * The signal of this operation's requests, made at its first: a native signal that follows the
   * client's (the server adapter's own stops reporting `aborted` once `AbortSignal.any` touches
   * it) and the deadline.
   */
  #signal(): AbortSignal | undefined {
    const { signal: client, deadlineMs } = this.#options;
    if (!client && !deadlineMs) return undefined;
    if (!this.#controller) {
      const controller = new AbortController();
      this.#controller = controller;
      if (client?.aborted) controller.abort(client.reason);
      client?.addEventListener('abort', () => controller.abort(client.reason), { once: true });
      if (deadlineMs) {
        this.#deadlineAt = Date.now() + deadlineMs;
        this.#deadline = setTimeout(() => controller.abort(new OperationDeadline()), deadlineMs);
        this.#deadline.unref();
      }
    }
    return this.#controller.signal;
  }

  /** OPERATION_TIMEOUT when the deadline is why `signal` aborted; else null. */
  #deadlinePassed(signal: AbortSignal | undefined): UpstreamError | null {
    if (!signal?.aborted || !(signal.reason instanceof OperationDeadline)) return null;
    return new UpstreamError(
      `The operation took longer than its ${this.#options.deadlineMs} ms (OPERATION_TIMEOUT_MS): this field was not completed.`,
      { code: 'OPERATION_TIMEOUT', failure: 'deadline' },
    );
  }

  /**
   * Resolves once every request in flight now has settled, so that a lookup can first see
   * whether a response already under way carries the record it needs.
   */
  async settled(): Promise<void> {
    if (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
  }

  async #fetch(
    endpoint: EndpointName,
    filterQuery: string,
    cursor: string | null,
    limit: number,
    skip: number,
  ) {
    const { apiKey, call, fresh } = this.#options;
    if (!apiKey) {
      throw new UpstreamError(
        'This field calls the Business-Signals API: send your API key in the X-API-Key header (or Authorization: Bearer <key>).',
        { code: 'UNAUTHORIZED', failure: 'no-key' },
      );
    }
    const signal = this.#signal();
    const queued = this.#slots.acquire();
    if (queued) await queued;
    try {
      // The client may have gone (or the deadline passed) while this request waited for a slot.
      if (signal?.aborted) {
        throw this.#deadlinePassed(signal) ?? unavailable('aborted', 'the client went away');
      }
      const { envelope } = await call({
        endpoint,
        filterQuery,
        cursor,
        limit,
        skip,
        apiKey,
        ledger: this.ledger,
        budget: this.budget,
        signal,
        deadline: this.#deadlineAt,
        fresh,
      });
      for (const listener of this.#listeners) listener(endpoint, envelope.data);
      return envelope;
    } catch (error) {
      throw this.#deadlinePassed(signal) ?? error;
    } finally {
      this.#slots.release();
    }
  }
}
