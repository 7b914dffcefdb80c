import type { QuotaObserver } from '../credits/quota/quota-store.js';
import type { LiveEvents } from '../live/poller-registry.js';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { OperationReport } from '../admission/operation-report.js';
import type { BreakerState } from '../upstream/circuit-breaker.js';
import type { Exchange, UpstreamObserver } from '../upstream/upstream-observer.js';
import { BoundedNames } from './bounded-names.js';
import { TallyCounter, TallyHistogram } from './tallies.js';
import type { DeliveryEvents } from '../alerts/attempt-delivery.js';

/** Distinct operation names kept as label values; later ones are `other`. */
const MAX_OPERATION_NAMES = 200;
/** Distinct error codes kept as label values (the gateway's own are about 20). */
const MAX_ERROR_CODES = 50;

const BREAKER_VALUE: Record<BreakerState, number> = { closed: 0, 'half-open': 1, open: 2 };

/** Seconds: from a cached answer (~1 ms) to the operation deadline (30 s). */
const OPERATION_BUCKETS = [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const UPSTREAM_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

/** The status label of an exchange: its class, or what happened when no response came. */
function statusClass(exchange: Exchange): string {
  if (exchange.failure === 'malformed') return 'malformed';
  if (exchange.status >= 100) return `${Math.floor(exchange.status / 100)}xx`;
  switch (exchange.failure) {
    case 'timeout':
    case 'aborted':
      return exchange.failure;
    default:
      return 'network';
  }
}

/**
 * The gateway's Prometheus metrics, on a registry of its own. Every label value comes from a
 * bounded set the gateway defines (endpoints, status classes, reasons, codes, outcomes) or, for
 * operation names, from the first {@link MAX_OPERATION_NAMES} seen: never a key, a filter value, a
 * cursor or a document. {@link upstream} is the observer to hand to `createUpstream`; the
 * operation reports come from `useOperationReport`.
 */
export class GatewayMetrics {
  readonly registry: Registry;
  readonly upstream: UpstreamObserver;
  /** The credit quotas' events (the log line of a fallback is the gateway's, not this). */
  readonly quota: Omit<QuotaObserver, 'fellBack'> & { fellBack(): void };
  /** The subscriptions' pollers: how many, their polls, records and credits. */
  readonly live: LiveEvents;
  readonly #operationNames = new BoundedNames(MAX_OPERATION_NAMES);
  readonly #codes = new BoundedNames(MAX_ERROR_CODES, 'NONE');
  readonly #operations: TallyCounter;
  readonly #operationSeconds: TallyHistogram;
  readonly #errors: Counter<'code'>;
  readonly #rejections: Counter<'reason'>;
  readonly #answered: Counter;
  readonly #answeredCredits: Counter;
  /** The alerts' deliveries: attempts by outcome, and the time from discovery to delivery. */
  readonly alerts: DeliveryEvents;
  #alertQueue: (() => number) | undefined;
  readonly #redisUp: Gauge;
  readonly #redisChanges: Counter<'state'>;

  /**
   * @param options.processMetrics also collect Node's default process metrics (CPU, memory, event
   *   loop, GC) on this registry: once per process.
   * @param options.cacheBytes what the in-memory page cache holds, read at each scrape.
   * @param options.queued the upstream requests waiting for a connection, read at each scrape.
   */
  constructor(
    options: {
      processMetrics?: boolean;
      cacheBytes?: () => number | undefined;
      queued?: () => number;
    } = {},
  ) {
    const registry = new Registry();
    this.registry = registry;
    if (options.processMetrics) collectDefaultMetrics({ register: registry });
    const registers = [registry];

    // The metrics counted at every operation and every upstream exchange are tallies.
    this.#operations = new TallyCounter(
      'gateway_operations_total',
      'GraphQL operations by name and outcome (ok: no errors; partial: errors, and data in a root field; error: errors and no data)',
      ['operation', 'outcome'],
      registers,
    );
    this.#operationSeconds = new TallyHistogram(
      'gateway_operation_duration_seconds',
      'Time from a GraphQL request to its response, by operation name and outcome',
      ['operation', 'outcome'],
      OPERATION_BUCKETS,
      registers,
    );
    this.#errors = new Counter({
      name: 'gateway_operation_errors_total',
      help: 'Operations answered with an error of each extensions.code (an operation counts once per code)',
      labelNames: ['code'],
      registers,
    });
    this.#rejections = new Counter({
      name: 'gateway_credit_budget_rejections_total',
      help: 'Operations refused before any upstream request: estimate over the budget, or answer too large',
      labelNames: ['reason'],
      registers,
    });
    this.#answered = new Counter({
      name: 'gateway_answers_repeated_total',
      help: 'Operations answered with a whole answer kept from an earlier request (repeat views): nothing run, no upstream request',
      registers,
    });
    this.#answeredCredits = new Counter({
      name: 'gateway_answers_repeated_credits_total',
      help: 'Credits the pages of the answers sent again would have cost (saved)',
      registers,
    });
    const attempts = new Counter({
      name: 'gateway_alert_deliveries_total',
      help: 'Attempts at alert deliveries, by outcome: delivered (2xx), retry (failed, tried again later), failed (given up, or the alert disabled)',
      labelNames: ['outcome'],
      registers,
    });
    const delivery = new Histogram({
      name: 'gateway_alert_delivery_seconds',
      help: "From a record's discovery by the service to its delivery's acknowledgement by the receiver",
      buckets: [0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 21600, 86400],
      registers,
    });
    const pending: Gauge = new Gauge({
      name: 'gateway_alert_deliveries_pending',
      help: 'Alert deliveries not acknowledged yet: the queue of this instance (with Redis, of all)',
      registers,
      collect: () => {
        const depth = this.#alertQueue?.();
        if (depth !== undefined) pending.set(depth);
      },
    });
    this.alerts = {
      attempted: (outcome) => attempts.inc({ outcome }),
      delivered: (latencyMs) => delivery.observe(latencyMs / 1000),
    };
    const requests = new TallyCounter(
      'gateway_upstream_requests_total',
      'HTTP requests sent to the service, by endpoint and status class (or timeout, network, malformed, aborted)',
      ['endpoint', 'status'],
      registers,
    );
    const requestSeconds = new TallyHistogram(
      'gateway_upstream_request_duration_seconds',
      'Time of a request to the service, from sending it to the end of its body, by endpoint',
      ['endpoint'],
      UPSTREAM_BUCKETS,
      registers,
    );
    const creditsUsed = new TallyCounter(
      'gateway_credits_used_total',
      'Credits the service charged, by endpoint',
      ['endpoint'],
      registers,
    );
    const creditsSaved = new Counter({
      name: 'gateway_credits_saved_total',
      help: 'Credits the pages served without a request would have cost, by endpoint and source (cache, joined, stale)',
      labelNames: ['endpoint', 'source'],
      registers,
    });
    const stalePages = new Counter({
      name: 'gateway_stale_pages_total',
      help: 'Pages served past their TTL because the service was down (CACHE_STALE_SECONDS), by endpoint',
      labelNames: ['endpoint'],
      registers,
    });
    const cacheLookups = new Counter({
      name: 'gateway_page_cache_lookups_total',
      help: 'Page cache lookups: hit (served from the cache) or miss (fetched from the service)',
      labelNames: ['result'],
      registers,
    });
    const cacheBytes = options.cacheBytes;
    new Gauge({
      name: 'gateway_page_cache_bytes',
      help: 'Bytes of response bodies the page cache holds in memory (with REDIS_URL, its tier in front of Redis; 0 when the cache is off)',
      registers,
      aggregator: 'sum',
      collect() {
        const bytes = cacheBytes?.();
        if (bytes !== undefined) this.set(bytes);
      },
    });
    const queued = options.queued;
    new Gauge({
      name: 'gateway_upstream_queued_requests',
      help: "Upstream requests waiting for one of the gateway's connections to the service (UPSTREAM_CONNECTIONS): the gateway's own load, never counted as the service failing",
      registers,
      aggregator: 'sum',
      collect() {
        this.set(queued?.() ?? 0);
      },
    });
    const retries = new Counter({
      name: 'gateway_upstream_retries_total',
      help: 'Requests to the service sent again, by reason (timeout, reset, refused, 500..504, 429)',
      labelNames: ['reason'],
      registers,
    });
    const breakerState = new Gauge({
      name: 'gateway_upstream_breaker_state',
      help: "The upstream circuit breaker's state: 0 closed, 1 half-open, 2 open (the most open worker)",
      registers,
      aggregator: 'max',
    });
    const breakerChanges = new Counter({
      name: 'gateway_upstream_breaker_transitions_total',
      help: 'Changes of the upstream circuit breaker, by the state entered',
      labelNames: ['state'],
      registers,
    });
    breakerState.set(0);
    this.#redisUp = new Gauge({
      name: 'gateway_redis_up',
      help: 'Whether the shared Redis (REDIS_URL) is asked now: 1, or 0 while it timed out or was unreachable and each instance serves from its own state (the least of the workers)',
      registers,
      aggregator: 'min',
    });
    this.#redisChanges = new Counter({
      name: 'gateway_redis_state_changes_total',
      help: 'Changes of the link to the shared Redis, by the state entered (up, down)',
      labelNames: ['state'],
      registers,
    });
    const quotaRefusals = new Counter({
      name: 'gateway_quota_refusals_total',
      help: "Operations refused because their estimate did not fit the principal's credit quota",
      registers,
    });
    const quotaReserved = new Counter({
      name: 'gateway_quota_credits_reserved_total',
      help: "Credits reserved from principals' quotas (the estimates of the operations admitted)",
      registers,
    });
    const quotaRefunded = new Counter({
      name: 'gateway_quota_credits_refunded_total',
      help: 'Reserved credits given back to the quotas once the operations charged less',
      registers,
    });
    const quotaFallbacks = new Counter({
      name: 'gateway_quota_fallbacks_total',
      help: "Quota reservations and settlements served by this instance's memory because Redis failed",
      registers,
    });
    this.quota = {
      refused: () => quotaRefusals.inc(),
      reserved: (credits) => quotaReserved.inc(credits),
      refunded: (credits) => quotaRefunded.inc(credits),
      fellBack: () => quotaFallbacks.inc(),
    };

    const livePollers = new Gauge({
      name: 'gateway_subscription_pollers',
      help: 'Pollers running on this instance: one per workspace, event list and filters',
      registers: [registry],
    });
    const liveSubscribers = new Gauge({
      name: 'gateway_subscription_subscribers',
      help: 'Subscriptions open on this instance',
      registers: [registry],
    });
    const livePolls = new Counter({
      name: 'gateway_subscription_polls_total',
      help: 'Polls of the service for new events (each with its pages), by outcome',
      labelNames: ['endpoint', 'outcome'],
      registers: [registry],
    });
    const liveRecords = new Counter({
      name: 'gateway_subscription_records_total',
      help: 'Records the polls returned: new ones (delivered), and repeats (returned again through their announcement date, charged again, not delivered)',
      labelNames: ['endpoint', 'kind'],
      registers: [registry],
    });
    const liveCredits = new Counter({
      name: 'gateway_subscription_credits_total',
      help: 'Credits the polls were charged, once per poller whatever the number of subscribers',
      labelNames: ['endpoint'],
      registers: [registry],
    });
    this.live = {
      changed(pollers, subscribers) {
        livePollers.set(pollers);
        liveSubscribers.set(subscribers);
      },
      polled(endpoint, records, fresh, credits) {
        const label = endpoint;
        livePolls.inc({ endpoint: label, outcome: 'ok' });
        if (fresh > 0) liveRecords.inc({ endpoint: label, kind: 'new' }, fresh);
        if (records > fresh) liveRecords.inc({ endpoint: label, kind: 'repeat' }, records - fresh);
        if (credits > 0) liveCredits.inc({ endpoint: label }, credits);
      },
      failed(endpoint) {
        livePolls.inc({ endpoint, outcome: 'failed' });
      },
    };

    this.upstream = {
      exchange(exchange) {
        requests.inc(1, exchange.endpoint, statusClass(exchange));
        requestSeconds.observe(exchange.seconds, exchange.endpoint);
        if (exchange.credits > 0) creditsUsed.inc(exchange.credits, exchange.endpoint);
      },
      served(endpoint, credits, source) {
        if (source === 'cache') cacheLookups.inc({ result: 'hit' });
        if (source === 'stale') stalePages.inc({ endpoint });
        if (credits > 0) creditsSaved.inc({ endpoint, source }, credits);
      },
      cacheMiss: () => cacheLookups.inc({ result: 'miss' }),
      // The reason is a failure kind or a status: bounded by the retry policy.
      retry: (reason) => retries.inc({ reason }),
      breaker(state) {
        breakerState.set(BREAKER_VALUE[state]);
        breakerChanges.inc({ state });
      },
    };
  }

  /** Where the depth of the alert deliveries' queue is read, at each scrape. */
  alertQueue(depth: () => number): void {
    this.#alertQueue = depth;
  }

  /** The link to the shared Redis changed state (`changed: false`: its first state, at boot). */
  redis(state: 'up' | 'down', { changed = true } = {}): void {
    this.#redisUp.set(state === 'up' ? 1 : 0);
    if (changed) this.#redisChanges.inc({ state });
  }

  /** Counts one GraphQL operation, from its report. */
  operation(report: OperationReport): void {
    const operation = this.#operationNames.label(report.operation);
    this.#operations.inc(1, operation, report.outcome);
    // A subscription lasts as long as its client stays: not a request's duration.
    if (report.type !== 'subscription')
      this.#operationSeconds.observe(report.ms / 1000, operation, report.outcome);
    if (report.answered) {
      this.#answered.inc();
      this.#answeredCredits.inc(report.credits.credits.saved);
    }
    for (const code of report.codes) {
      this.#errors.inc({ code: this.#codes.label(code) });
      if (code === 'CREDIT_BUDGET_EXCEEDED') this.#rejections.inc({ reason: 'estimate' });
      if (code === 'RESPONSE_TOO_LARGE') this.#rejections.inc({ reason: 'records' });
    }
  }

  /** The Prometheus text exposition of every metric. */
  scrape(): Promise<string> {
    return this.registry.metrics();
  }
}
