import type { GraphQLError } from 'graphql';
import type { Admission } from './admission/admission.js';
import type { AlertsApi } from './alerts/alerts-api.js';
import type { DoorContext } from './admission/door-context.js';
import type { Caller } from './auth/create-authenticator.js';
import type { Config } from './config.js';
import type { CreditExtensions } from './credits/credit-extensions.js';
import type { QuotaHold } from './credits/quota-account.js';
import type { LiveDeps } from './live/live-deps.js';
import { RecordStore } from './nodes/record-store.js';
import type { SharedPipeline } from './upstream/operation-call.js';
import { UpstreamSession } from './upstream/upstream-session.js';
import type { UpstreamTrace } from './upstream/upstream-trace.js';

/** What every resolver gets: the request's caller, its upstream session, records and settings. */
export interface Context extends DoorContext {
  config: Config;
  /** The rules every operation passes (the subscription fields ask them too). */
  admission: Admission;
  /**
   * Who calls and with which upstream key, as the door resolved it: absent only where no caller
   * is needed (no operation runs without one). Its key and principal are never logged.
   */
  caller?: Caller;
  /** What the operation holds of its principal's quota; null when none applies. */
  quotaHold: QuotaHold | null;
  /** The caller's upstream session: key, dedupe, concurrency cap, ledger, budget. */
  upstream: UpstreamSession;
  /** The records seen in this operation, and lookups by id. */
  records: RecordStore;
  /**
   * Errors of fields that still returned data: a connection whose later upstream page failed
   * keeps the records already paid for. Added to the response's `errors` after execution.
   */
  fieldErrors: GraphQLError[];
  /** What subscriptions share, when the gateway serves them; the subscription fields use it. */
  live: LiveDeps | undefined;
  /** The alerts, when the gateway serves them (`ALERTS=on`); the alert fields use them. */
  alerts: AlertsApi | undefined;
  /**
   * Set by a field that read the gateway's own state (the caller's alerts), which changes
   * without the service: the answer is not kept for repeat views.
   */
  ownState?: boolean;
  /**
   * The operation's subscription, once its field started one (`live/live-subscription.ts`):
   * what its last payload cost, for that payload's `extensions`.
   */
  subscription?: {
    report(): CreditExtensions | undefined;
    /** The record of the payload being executed: its id and when it was discovered. */
    readonly record?: { readonly id: string; readonly discoveredAt: string | null };
  };
  /** The request's signal: aborts its upstream requests when the client goes away. */
  signal?: AbortSignal;
}

/**
 * True when the request asks for fresh data (`Cache-Control: no-cache` or `no-store`, or
 * `Pragma: no-cache`): its pages are fetched and charged, and refresh the cache.
 */
export function wantsFresh(headers: Pick<Headers, 'get'>): boolean {
  const cacheControl = headers.get('cache-control');
  if (cacheControl && /(?:^|,)\s*no-(?:cache|store)\s*(?:,|$)/i.test(cacheControl)) return true;
  return /^\s*no-cache\s*$/i.test(headers.get('pragma') ?? '');
}

/** What the operations of one gateway share, from which each context is built. */
export interface ContextDeps {
  config: Config;
  admission: Admission;
  shared: SharedPipeline;
  live?: LiveDeps;
  alerts?: AlertsApi;
}

/** What an operation's context takes from its request. */
export interface RequestFacts {
  /** The request's signal: aborts the upstream requests when the client goes away. */
  signal?: AbortSignal;
  /** See {@link wantsFresh}. */
  fresh?: boolean;
  /** The request's traces of its upstream requests, when traces are on. */
  trace?: UpstreamTrace;
}

/** What a context keeps of its request to open sessions: the caller's key, freshness, traces. */
interface SessionFacts extends RequestFacts {
  deps: ContextDeps;
}

const FACTS = Symbol('session facts');

/** A new upstream session for `context`'s caller (the first, or a subscription payload's). */
function openSession(context: Context & { [FACTS]: SessionFacts }): UpstreamSession {
  const { deps, ...facts } = context[FACTS];
  const { config } = deps;
  return new UpstreamSession(deps.shared, {
    apiKey: context.caller?.upstreamKey ?? null,
    concurrency: config.upstreamConcurrency,
    maxRequests: config.maxUpstreamRequests,
    ...facts,
    deadlineMs: config.operationTimeoutMs,
    onPage: (endpoint, data) => context.records.remember(endpoint, data),
  });
}

/**
 * The operation's part of its context, over what its door put in Yoga's server context (the
 * caller above all): a fresh upstream session and record store. The upstream key lives in the
 * caller and the session, nowhere else.
 */
export function contextOf(deps: ContextDeps, door: DoorContext, facts: RequestFacts) {
  const context = door as Context & { [FACTS]: SessionFacts };
  context[FACTS] = { deps, ...facts };
  const upstream = openSession(context);
  return {
    config: deps.config,
    admission: deps.admission,
    quotaHold: null,
    upstream,
    records: new RecordStore(upstream),
    fieldErrors: [] as GraphQLError[],
    live: deps.live,
    alerts: deps.alerts,
    signal: facts.signal,
  } satisfies Partial<Context>;
}

/**
 * Gives `context` a new upstream session and record store, for a subscription's next payload:
 * each payload's nested fields are a small operation of their own.
 */
export function renewSession(context: Context): UpstreamSession {
  const session = openSession(context as Context & { [FACTS]: SessionFacts });
  context.upstream = session;
  context.records = new RecordStore(session);
  context.fieldErrors = [];
  return session;
}
