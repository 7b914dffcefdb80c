import type { GraphQLError } from 'graphql';
import { ErrorCode, gatewayError } from '../errors.js';
import { buildPageQuery, type PageParams } from './build-query.js';
import type { UpstreamClient } from './create-upstream-client.js';
import type { EndpointName, EndpointRecords } from './endpoints.js';
import type { ListEnvelope } from './types.js';

/** What one GraphQL operation has cost upstream; reported in `extensions`. */
export interface CreditLedger {
  /** Sum of `meta.creditsUsed` over the operation's successful upstream requests. */
  used: number;
  /** Lowest `meta.creditsRemaining` seen, or null when no request succeeded. */
  remaining: number | null;
  /** Upstream HTTP requests sent, successful or not. */
  requests: number;
}

/** Called with every page the upstream returns, so loaders can prime what it embeds. */
export type PageListener = <E extends EndpointName>(
  endpoint: E,
  records: readonly EndpointRecords[E][],
) => void;

/**
 * The caller's view of the upstream for one GraphQL operation: it holds the caller's key, makes
 * each distinct request (endpoint + normalised query) at most once, keeps at most `concurrency`
 * requests in flight, and books what they cost. Made per request, never shared.
 */
export class UpstreamSession {
  readonly ledger: CreditLedger = { used: 0, remaining: null, requests: 0 };
  /**
   * Errors of fields that still returned data: a connection whose later upstream page failed
   * keeps the records already paid for. Added to the response's `errors` after execution.
   */
  readonly partialErrors: GraphQLError[] = [];
  readonly #pages = new Map<string, Promise<ListEnvelope<unknown>>>();
  readonly #queue: (() => void)[] = [];
  readonly #inFlight = new Set<Promise<unknown>>();
  #active = 0;

  constructor(
    private readonly client: UpstreamClient,
    private readonly apiKey: string | null,
    private readonly concurrency: number,
    private readonly onPage?: PageListener,
  ) {}

  /** One page of `endpoint`; the same page asked twice in this operation is fetched once. */
  page<E extends EndpointName>(
    endpoint: E,
    filterQuery: string,
    page: PageParams,
  ): Promise<ListEnvelope<EndpointRecords[E]>> {
    const query = buildPageQuery(filterQuery, page);
    const key = `${endpoint}?${query}`;
    let pending = this.#pages.get(key);
    if (!pending) {
      const request = this.#fetch(endpoint, query);
      this.#pages.set(key, request);
      this.#inFlight.add(request);
      const done = () => this.#inFlight.delete(request);
      request.then(done, done);
      pending = request;
    }
    return pending as Promise<ListEnvelope<EndpointRecords[E]>>;
  }

  /**
   * Resolves once every request in flight now has settled, so that a lookup can first see
   * whether a response already under way carries the record it needs.
   */
  async settled(): Promise<void> {
    if (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
  }

  async #fetch<E extends EndpointName>(endpoint: E, query: string) {
    if (!this.apiKey) {
      throw gatewayError(
        ErrorCode.UNAUTHORIZED,
        'This field calls the Business-Signals API: send your API key in the X-API-Key header (or Authorization: Bearer <key>).',
      );
    }
    if (this.#active >= this.concurrency) {
      await new Promise<void>((resolve) => this.#queue.push(resolve));
    }
    this.#active++;
    this.ledger.requests++;
    try {
      const envelope = await this.client.list(endpoint, query, this.apiKey);
      const { creditsUsed, creditsRemaining } = envelope.meta;
      if (typeof creditsUsed === 'number') this.ledger.used += creditsUsed;
      if (typeof creditsRemaining === 'number') {
        this.ledger.remaining =
          this.ledger.remaining === null
            ? creditsRemaining
            : Math.min(this.ledger.remaining, creditsRemaining);
      }
      this.onPage?.(endpoint, envelope.data);
      return envelope;
    } finally {
      this.#active--;
      this.#queue.shift()?.();
    }
  }
}
