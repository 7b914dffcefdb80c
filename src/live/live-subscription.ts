import { GraphQLError } from 'graphql';
import type { OperationReport } from '../admission/operation-report.js';
import { renewSession, type Context } from '../context.js';
import { subscriptionCredits, type CreditExtensions } from '../credits/credit-extensions.js';
import type { QuotaHold } from '../credits/quota-account.js';
import { quotaRefusal, type QuotaAccount, type QuotaReport } from '../credits/quota-account.js';
import { ErrorCode, gatewayError } from '../errors.js';
import type { EndpointFilters } from '../upstream/endpoints.js';
import { UpstreamError } from '../upstream/upstream-error.js';
import type { UpstreamSession } from '../upstream/upstream-session.js';
import type { EventRecord } from './event-poller.js';
import { LiveFeed, type Delivery } from './live-feed.js';
import type { EventEndpoint } from './poller-registry.js';
import { atTime } from './at-time.js';

/** What a subscription field asks for: its list, its filters, and where it starts. */
export interface SubscriptionRequest {
  endpoint: EventEndpoint;
  /** Its filters, `since` left out. */
  filters: EndpointFilters<EventEndpoint>;
  /** The `since` it asked for, as the service reads it; null for none. */
  since: string | null;
}

/** One payload being executed: its session and what it holds of the quota. */
interface Payload {
  session: UpstreamSession;
  hold: QuotaHold | null;
  /** Its record came from the subscription's own catch-up, already charged to it. */
  paid: boolean;
}

/**
 * One subscription, made by its field when the operation subscribes (never by a context that
 * does not): it passes the admission's rules for subscriptions once, at the start, and for each
 * payload, and reports itself once when it ends.
 *
 * At the start, before anything is polled: the caller must have a key and a valid token; it is
 * counted against the bounds of open subscriptions (its principal's, its connection's); its budget
 * is the operation's (`X-Credit-Budget`, else `SUBSCRIPTION_BUDGET_DEFAULT`); and with a quota,
 * the bucket must hold a payload's estimate, and a `since` catch-up takes from it up front what
 * it may fetch (no more than the bucket holds, nor the budget allows), settled to what it was
 * charged once it returns.
 *
 * Credits: the poller pays the service once per new record, whatever the number of subscribers;
 * each subscription counts a credit per record delivered to it, plus what its nested fields
 * charge, against its budget, and reserves it from the quota (a catch-up's records are already
 * paid). When the budget is spent it ends with CREDIT_BUDGET_EXHAUSTED; when the quota cannot
 * back the next record, with CREDIT_QUOTA_EXCEEDED; when its caller's token expires, with
 * UNAUTHENTICATED, at that moment, and nothing more is fetched for it.
 */
export class LiveSubscription {
  readonly #context: Context;
  #account: QuotaAccount | null = null;
  #budget = 0;
  #estimate = 1;
  #spent = 0;
  #remaining: number | null = null;
  #payload: Payload | undefined;
  #last: CreditExtensions | undefined;
  #quota: QuotaReport | undefined;
  /** The catch-up's hold until it returns (it settles to what the catch-up was charged). */
  #catchUp: QuotaHold | null = null;
  readonly #totals = { payloads: 0, used: 0, saved: 0, requests: 0, retries: 0 };
  #record: EventRecord | undefined;

  constructor(context: Context) {
    this.#context = context;
  }

  /** The record of the payload being executed (or just executed). */
  get record(): EventRecord | undefined {
    return this.#record;
  }

  /** What the subscription may still spend of its budget. */
  get left(): number {
    return Math.max(0, this.#budget - this.#spent);
  }

  /**
   * Starts it: its source of records, or the refusal thrown (nothing polled then). A refusal is
   * the subscription's one payload, in a stream that was opened with 200: it carries no HTTP
   * status of its own (a 429 or 401 would make an SSE client drop the stream, and the reason).
   */
  start(request: SubscriptionRequest): Promise<AsyncIterableIterator<Delivery>> {
    return this.#start(request).catch((error: unknown) => {
      throw withoutStatus(error);
    });
  }

  async #start(request: SubscriptionRequest): Promise<AsyncIterableIterator<Delivery>> {
    const context = this.#context;
    const { admission, caller, live } = context;
    if (!live) throw new Error('Subscriptions are not served here.');
    const apiKey = caller?.upstreamKey;
    if (!caller || !apiKey) {
      throw new UpstreamError(
        "Subscriptions poll the Business-Signals API: send your API key in the X-API-Key header (or in connection_init's payload over a WebSocket).",
        { code: 'UNAUTHORIZED', failure: 'no-key' },
      );
    }
    if (live.shuttingDown()) {
      throw gatewayError(
        ErrorCode.UPSTREAM_UNAVAILABLE,
        'The gateway is shutting down: subscribe again in a moment.',
      );
    }
    const expired = admission.expired(caller);
    if (expired) throw expired;
    const release = admission.subscriptions.open(caller.principal ?? apiKey, context.connection);
    if (typeof release !== 'function') throw release;
    try {
      const { budget } = context.upstream;
      this.#budget = budget.budget ?? context.config.subscriptionBudgetDefault;
      this.#estimate = Math.max(1, budget.estimate ?? 1);
      this.#account = admission.account(caller);
      if (this.#account) await this.#reserveStart(this.#account, request.since !== null);
    } catch (error) {
      release();
      throw error;
    }
    const started = performance.now();
    // An alert resumes after the last record it took, whatever `since` its document says.
    const since = context.resumeFrom ?? request.since;
    const from = since === null ? Date.now() : Date.parse(since);
    let expiry: (() => void) | undefined;
    const feed: LiveFeed = new LiveFeed({
      from,
      since,
      capacity: () => Math.min(this.left, this.#catchUp?.taken ?? Infinity),
      join: (listener) =>
        live.registry.join(
          { apiKey, endpoint: request.endpoint, filters: request.filters },
          listener,
        ),
      admit: (paid) => this.#admit(paid),
      // A catch-up that fails is tried again from its `since` while its hold stays: the pages the
      // failed try was charged are not booked against the quota (the poller does not tell them).
      caughtUp: (credits) => {
        void this.#catchUp?.settle(credits);
        this.#catchUp = null;
      },
      remaining: (credits) => {
        if (credits !== null) this.#remaining = credits;
      },
      onRecord: (record) => {
        this.#record = record;
      },
      onEnd: (error) => {
        expiry?.();
        live.feeds.delete(feed);
        release();
        this.#settle();
        this.#report(started, error);
      },
      signal: context.signal,
    });
    live.feeds.add(feed);
    if (Number.isFinite(caller.validUntil)) {
      expiry = atTime(caller.validUntil, () => {
        const refusal = admission.expired(caller);
        if (refusal) feed.end(refusal);
      });
    }
    return feed;
  }

  /** The extensions of the payload just executed (settled first); undefined before any. */
  report(): CreditExtensions | undefined {
    this.#settle();
    return this.#last;
  }

  /**
   * With a quota, before anything is polled: a catch-up takes what it may fetch from the bucket
   * (refused when the bucket holds less than a record); otherwise the bucket must hold one
   * payload's estimate (taken and given back: each payload reserves its own).
   */
  async #reserveStart(account: QuotaAccount, catchUp: boolean): Promise<void> {
    if (catchUp) {
      const hold = await account.reserveUpTo(this.left);
      if (hold.taken < 1) {
        await hold.settle(0);
        account.quotas.observer.refused();
        throw quotaRefusal(account.quota, 1, hold.report.remaining);
      }
      this.#catchUp = hold;
      this.#quota = hold.report;
      return;
    }
    const hold = await account.reserve(this.#estimate);
    if (hold.refusal) throw hold.refusal;
    await hold.settle(0);
    this.#quota = hold.report;
  }

  /** Before a record: settles the previous payload, then checks the caller, budget and quota. */
  async #admit(paid: boolean): Promise<GraphQLError | null> {
    this.#settle();
    const left = this.left;
    if (left < 1) {
      return gatewayError(
        ErrorCode.CREDIT_BUDGET_EXHAUSTED,
        `This subscription spent its budget of ${this.#budget} credits (a credit per record delivered, plus nested lookups). Subscribe again, with a larger X-Credit-Budget if you need more.`,
        { budget: this.#budget },
      );
    }
    const { caller, admission } = this.#context;
    const expired = caller && admission.expired(caller);
    if (expired) return expired;
    let hold: QuotaHold | null = null;
    if (this.#account) {
      // A record of its own catch-up is paid: only its nested fields' estimate is reserved.
      const own = paid ? 0 : 1;
      const want = Math.min(this.#estimate - 1, left - 1) + own;
      const reserved = await this.#account.reserve(want);
      this.#quota = reserved.report;
      if (reserved.refusal) return reserved.refusal;
      hold = reserved;
    }
    const session = renewSession(this.#context);
    // The record itself is the subscription's first credit of the payload; its nested fields may
    // spend what is left of the budget (and of what the quota backs), never more.
    session.budget.set(left - 1, this.#estimate - 1);
    if (hold) session.budget.backBy(hold.taken - (paid ? 0 : 1), hold.extend);
    this.#payload = { session, hold, paid };
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
    if (payload.hold) {
      const { hold } = payload;
      const done = hold.settle((payload.paid ? 0 : 1) + nested);
      const keep = () => (this.#quota = hold.report);
      if (done instanceof Promise) void done.then(keep);
      else keep();
    }
    const totals = this.#totals;
    totals.payloads += 1;
    totals.used += 1 + nested;
    totals.saved += ledger.saved;
    totals.requests += ledger.requests;
    totals.retries += ledger.retries;
    this.#last = this.#credits({
      used: 1 + nested,
      saved: ledger.saved,
      requests: ledger.requests,
      retries: ledger.retries,
    });
  }

  /** What `spent` (a payload, or the whole subscription's) comes to, with where it stands. */
  #credits(spent: { used: number; saved: number; requests: number; retries: number }) {
    return subscriptionCredits({
      ...spent,
      estimate: this.#estimate,
      budget: this.#budget,
      spent: this.#spent,
      left: this.left,
      remaining: this.#remaining,
      quota: this.#quota,
    });
  }

  /** Reports the subscription once it ended: its payloads, credits, codes and duration. */
  #report(started: number, error: Error | undefined): void {
    const { admission, booking } = this.#context;
    const totals = this.#totals;
    const code = error && codeOf(error);
    const report: OperationReport = {
      requestId: booking?.requestId ?? '',
      endpoint: booking?.endpoint ?? '/graphql',
      door: booking?.door ?? 'http',
      operation: booking?.operation ?? null,
      type: 'subscription',
      status: booking?.door === 'websocket' ? null : 200,
      ms: performance.now() - started,
      outcome: !error ? 'ok' : totals.payloads > 0 ? 'partial' : 'error',
      codes: code ? [code] : [],
      credits: this.#credits(totals),
      payloads: totals.payloads,
      traceId: booking?.trace?.traceId,
    };
    admission.report(report);
  }
}

/** `error` without the HTTP status (and headers) its code is answered with alone. */
function withoutStatus(error: unknown): unknown {
  if (!(error instanceof GraphQLError) || !error.extensions['http']) return error;
  const { http: _http, ...extensions } = error.extensions;
  return new GraphQLError(error.message, { extensions });
}

/** The code an ending error is answered with (an upstream one's too); `NONE` for a bare one. */
function codeOf(error: Error): string {
  if (error instanceof UpstreamError) return error.code;
  const code = (error as GraphQLError).extensions?.['code'];
  return typeof code === 'string' ? code : 'NONE';
}
