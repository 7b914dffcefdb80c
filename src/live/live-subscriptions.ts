import type { GraphQLError } from 'graphql';
import type { Config } from '../config.js';
import { ErrorCode, gatewayError } from '../errors.js';
import {
  refusal,
  report,
  type CreditQuotaOptions,
  type QuotaReport,
} from '../plugins/use-credit-quota.js';
import type { CreditQuota } from '../quota/credit-quota.js';
import type { QuotaStore } from '../quota/quota-store.js';
import { toFilters } from '../schema/filter-args.js';
import type { EndpointFilters } from '../upstream/endpoints.js';
import { UpstreamError } from '../upstream/upstream-error.js';
import type { UpstreamSession } from '../upstream/upstream-session.js';
import { LiveFeed, type Delivery } from './live-feed.js';
import type { EventEndpoint, PollerRegistry } from './poller-registry.js';

/** What the subscriptions of one gateway share: the pollers, the quotas, the open feeds. */
export interface LiveDeps {
  registry: PollerRegistry;
  /** The credit quotas, when any principal has one. */
  quotas?: CreditQuotaOptions;
  /** Every open subscription's feed: shutdown closes them. */
  feeds: Set<LiveFeed>;
  /** True once the gateway shuts down: no new subscription starts. */
  shuttingDown(): boolean;
}

/** What one subscription has spent, as each payload's `extensions.credits` reports it. */
export interface LiveReport {
  /** What this payload cost the subscription: its record, and what its nested fields charged. */
  used: number;
  /** Credits its nested fields were served from the cache or by joining another request. */
  saved: number;
  /** The workspace's credits left, from the freshest response. */
  remaining: number | null;
  /** What one payload was estimated to cost before the subscription started. */
  estimate: number;
  /** The subscription's budget (`X-Credit-Budget`, else `SUBSCRIPTION_BUDGET_DEFAULT`). */
  budget: number;
  /** What it has spent so far, this payload included. */
  spent: number;
  /** What it may still spend. */
  left: number;
  upstreamRequests: number;
  quota?: QuotaReport;
}

/** The caller's part of a subscription: what the operation's context knows of it. */
export interface LiveCaller {
  config: Config;
  /** The key the pollers send; '' when the caller has none. */
  apiKey: string;
  principal: string | null;
  creditQuota: CreditQuota | null;
  /** The subscription's budget and its estimate per payload, as `useCreditBudget` set them. */
  session: () => UpstreamSession;
  /** A new upstream session (and record store) for the next payload's nested fields. */
  renew: () => UpstreamSession;
  signal?: AbortSignal;
}

/** One payload being executed: its session and what it took from the quota. */
interface Payload {
  session: UpstreamSession;
  /** Credits taken from the quota for it. */
  taken: number;
  heldBy?: QuotaStore;
}

/**
 * A context's subscription: `subscribe` starts it (filters checked first, nothing polled for a
 * bad one) and returns its source; `report` gives the figures of the payload just executed, for
 * `extensions`. Made per operation, never shared.
 *
 * Credits: the poller pays the service once per new record, whatever the number of subscribers;
 * each subscription counts a credit per record delivered to it, plus what its nested fields
 * charge, against its budget (and the caller's quota, when one applies). When the budget is
 * spent it ends with CREDIT_BUDGET_EXHAUSTED; when the quota cannot back the next record, with
 * CREDIT_QUOTA_EXCEEDED.
 */
export class LiveSubscription {
  readonly #deps: LiveDeps;
  readonly #caller: LiveCaller;
  #budget = 0;
  #estimate = 1;
  #spent = 0;
  #remaining: number | null = null;
  #payload: Payload | undefined;
  #last: LiveReport | undefined;
  #quota: QuotaReport | undefined;

  constructor(deps: LiveDeps, caller: LiveCaller) {
    this.#deps = deps;
    this.#caller = caller;
  }

  /** Starts the subscription to `endpoint`'s new records matching `args`. */
  subscribe(endpoint: EventEndpoint, args: object): AsyncIterableIterator<Delivery> {
    const { config, apiKey } = this.#caller;
    const filters = toFilters(
      endpoint,
      args,
      config.cursorSecret,
    ) as EndpointFilters<EventEndpoint>;
    const { since, ...rest } = filters as EndpointFilters<EventEndpoint> & { since?: string };
    if (!apiKey) {
      throw new UpstreamError(
        "Subscriptions poll the Business-Signals API: send your API key in the X-API-Key header (or in connection_init's payload over a WebSocket).",
        { code: 'UNAUTHORIZED', failure: 'no-key' },
      );
    }
    if (this.#deps.shuttingDown()) {
      throw gatewayError(
        ErrorCode.UPSTREAM_UNAVAILABLE,
        'The gateway is shutting down: subscribe again in a moment.',
      );
    }
    const { budget } = this.#caller.session();
    this.#budget = budget.budget ?? config.subscriptionBudgetDefault;
    this.#estimate = Math.max(1, budget.estimate ?? 1);
    const from = since === undefined ? Date.now() : Date.parse(since);
    const feeds = this.#deps.feeds;
    const feed: LiveFeed = new LiveFeed({
      from,
      since: since ?? null,
      capacity: () => this.left,
      join: (listener) =>
        this.#deps.registry.join(
          { apiKey, endpoint, filters: rest as EndpointFilters<EventEndpoint> },
          listener,
        ),
      admit: () => this.#admit(),
      remaining: (credits) => {
        if (credits !== null) this.#remaining = credits;
      },
      onEnd: () => {
        feeds.delete(feed);
        this.#settle();
      },
      signal: this.#caller.signal,
    });
    feeds.add(feed);
    return feed;
  }

  /** The figures of the payload just executed (it is settled first); undefined before any. */
  report(): LiveReport | undefined {
    this.#settle();
    return this.#last;
  }

  get left(): number {
    return Math.max(0, this.#budget - this.#spent);
  }

  /** Before a record: settles the previous payload, then checks the budget and the quota. */
  async #admit(): Promise<GraphQLError | null> {
    this.#settle();
    const left = this.left;
    if (left < 1) {
      return gatewayError(
        ErrorCode.CREDIT_BUDGET_EXHAUSTED,
        `This subscription spent its budget of ${this.#budget} credits (a credit per record delivered, plus nested lookups). Subscribe again, with a larger X-Credit-Budget if you need more.`,
        { budget: this.#budget },
      );
    }
    const { principal, creditQuota } = this.#caller;
    const quotas = this.#deps.quotas;
    let taken = 0;
    let heldBy: QuotaStore | undefined;
    if (quotas && principal !== null && creditQuota !== null) {
      const want = Math.min(this.#estimate, left);
      const answer = await quotas.store.reserve(principal, creditQuota, want);
      this.#quota = report(creditQuota, answer.credits);
      if (!answer.admitted) {
        quotas.observer.refused();
        return refusal(creditQuota, want, answer.credits);
      }
      quotas.observer.reserved(want);
      taken = want;
      heldBy = answer.heldBy;
    }
    const session = this.#caller.renew();
    // The record itself is the subscription's first credit of the payload; its nested fields may
    // spend what is left of the budget (and of what the quota backs), never more.
    session.budget.set(left - 1, this.#estimate - 1);
    const payload: Payload = { session, taken, heldBy };
    if (heldBy && principal !== null && creditQuota !== null && quotas) {
      session.budget.backBy(taken - 1, async (more) => {
        const extension = await quotas.store.reserve(principal, creditQuota, more);
        if (extension.admitted) {
          payload.taken += more;
          quotas.observer.reserved(more);
        }
        return extension.admitted;
      });
    }
    this.#payload = payload;
    this.#spent += 1;
    return null;
  }

  /** Books the payload just executed: what its nested fields charged; the quota's rest back. */
  #settle(): void {
    const payload = this.#payload;
    if (!payload) return;
    this.#payload = undefined;
    const { ledger } = payload.session;
    payload.session.end();
    const nested = ledger.used + ledger.uncertain;
    this.#spent += nested;
    if (ledger.remaining !== null) this.#remaining = ledger.remaining;
    const { principal, creditQuota } = this.#caller;
    const quotas = this.#deps.quotas;
    if (payload.heldBy && principal !== null && creditQuota !== null && quotas) {
      const refund = payload.taken - (1 + nested);
      if (refund > 0) quotas.observer.refunded(refund);
      const settled = payload.heldBy.settle(principal, creditQuota, refund);
      const keep = (credits: number) => (this.#quota = report(creditQuota, credits));
      if (settled instanceof Promise) settled.then(keep, () => undefined);
      else keep(settled);
    }
    this.#last = {
      used: 1 + nested,
      saved: ledger.saved,
      remaining: this.#remaining,
      estimate: this.#estimate,
      budget: this.#budget,
      spent: this.#spent,
      left: this.left,
      upstreamRequests: ledger.requests,
      ...(this.#quota ? { quota: this.#quota } : {}),
    };
  }
}
