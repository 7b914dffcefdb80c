import type { PageParams } from './build-query.js';
import { CreditBudget } from '../credits/credit-budget.js';
import { CreditLedger } from '../credits/credit-ledger.js';
import type { EndpointName, EndpointRecords } from './endpoints.js';
import { operationCall, type SharedPipeline } from './operation-call.js';
import { OperationDeadline } from './operation-deadline.js';
import type { OperationPages } from './policies/dedupe.js';
import type { PageListener } from './policies/on-page.js';
import { Semaphore } from './semaphore.js';
import type { ListEnvelope } from './types.js';
import type { UpstreamCall, UpstreamPage } from './upstream-call.js';
import type { UpstreamTrace } from './upstream-trace.js';

/** Options of {@link UpstreamSession}: what the operation's request and the settings say. */
export interface SessionOptions {
  /** The caller's key, or null when the request carried none. */
  apiKey: string | null;
  /** Upstream requests this operation may have in flight at once. */
  concurrency: number;
  /** Upstream requests this operation may send in all (`MAX_UPSTREAM_REQUESTS`); absent, any. */
  maxRequests?: number;
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
  /** Told of every page the operation receives (its record store). */
  onPage?: PageListener;
  /** The operation's traces, when they are on (`OTEL_TRACES_EXPORTER=otlp`). */
  trace?: UpstreamTrace;
}

/** A page request: paging, plus the records at its start the caller will drop. */
export interface SessionPage extends PageParams {
  /** Records at the start of the page the caller will drop (default 0); see `CreditBudget`. */
  skip?: number;
}

/** The envelope of a page, as the session's callers read it. */
const envelopeOf = (page: UpstreamPage) => page.envelope;

/**
 * The caller's view of the upstream for one GraphQL operation, made per request, never shared:
 * its call is `operationCall` over the shared pipeline (dedupe, the key, the deadline, the
 * concurrency cap, the page listener, then the shared policies), and it holds the operation's
 * state: the ledger the requests are booked in, the budget that stops the spending, the pages
 * asked for, the slots, the deadline.
 */
export class UpstreamSession {
  readonly ledger = new CreditLedger();
  readonly budget = new CreditBudget();
  readonly #call: UpstreamCall;
  readonly #deadline: OperationDeadline;
  readonly #apiKey: string;
  readonly #fresh: boolean | undefined;
  /** The pages this operation asked for, by page key (the `dedupe` policy's table). */
  readonly #pages: OperationPages = new Map();

  constructor(shared: SharedPipeline, options: SessionOptions) {
    this.#apiKey = options.apiKey ?? '';
    this.#fresh = options.fresh;
    this.#deadline = new OperationDeadline(options.deadlineMs, options.signal);
    this.#call = operationCall(shared, {
      pages: this.#pages,
      slots: new Semaphore(options.concurrency),
      deadline: this.#deadline,
      onPage: options.onPage,
      maxRequests: options.maxRequests,
      trace: options.trace,
    });
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
    return this.#call({
      endpoint,
      filterQuery,
      cursor: page.cursor ?? null,
      limit: page.limit,
      skip: page.skip ?? 0,
      apiKey: this.#apiKey,
      ledger: this.ledger,
      budget: this.budget,
      fresh: this.#fresh,
    }).then(envelopeOf) as Promise<ListEnvelope<EndpointRecords[E]>>;
  }

  /**
   * Resolves once every request in flight now has settled, so that a lookup can first see
   * whether a response already under way carries the record it needs.
   */
  async settled(): Promise<void> {
    // Every page asked is in the operation's table (`dedupe`): those settled count for nothing.
    if (this.#pages.size > 0) await Promise.allSettled(this.#pages.values());
  }

  /** Ends the operation: its deadline no longer runs. Called once its result is complete. */
  end(): void {
    this.#deadline.stop();
  }
}
