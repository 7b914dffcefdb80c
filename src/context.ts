import type { GraphQLError } from 'graphql';
import type { Config } from './config.js';
import type { QuotaReport } from './plugins/use-credit-quota.js';
import type { CreditQuota } from './quota/credit-quota.js';
import { RecordStore } from './nodes/record-store.js';
import type { SharedPipeline } from './upstream/operation-call.js';
import { UpstreamSession } from './upstream/upstream-session.js';
import type { UpstreamTrace } from './upstream/upstream-trace.js';
import { LiveSubscription, type LiveDeps } from './live/live-subscriptions.js';

/** What every resolver gets: this operation's upstream session, records and settings. */
export interface Context {
  config: Config;
  /**
   * Who calls, for per-caller policies: the token's `sub` (`AUTH_MODE=jwt`), or the key the request
   * sent (`api-key`); null when it sent none. Never logged.
   */
  principal: string | null;
  /**
   * The principal's credit quota: the token's `JWT_QUOTA_CLAIM`, else `CREDIT_QUOTA`; null for
   * none. `useCreditQuota` keeps it.
   */
  creditQuota: CreditQuota | null;
  /** The principal's bucket as `useCreditQuota` left it; null when no quota applied. */
  quota: QuotaReport | null;
  /** The caller's upstream session: key, dedupe, concurrency cap, ledger. */
  upstream: UpstreamSession;
  /** The records seen in this operation, and lookups by id. */
  records: RecordStore;
  /**
   * Errors of fields that still returned data: a connection whose later upstream page failed
   * keeps the records already paid for. Added to the response's `errors` after execution.
   */
  fieldErrors: GraphQLError[];
  /**
   * The operation's subscription, when the gateway serves them: started by a `Subscription`
   * field; each payload gets a fresh `upstream` session and record store.
   */
  live: LiveSubscription | null;
}

/** The caller's key from `X-API-Key`, or else `Authorization: Bearer <key>`; null if neither. */
export function apiKeyFrom(headers: Pick<Headers, 'get'>): string | null {
  const key = headers.get('x-api-key')?.trim();
  if (key) return key;
  const match = /^Bearer\s+(.+)$/i.exec(headers.get('authorization') ?? '');
  return match?.[1]?.trim() || null;
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

/** What an operation's context takes from its HTTP request. */
export interface RequestFacts {
  /**
   * The key the session forwards upstream, as `useAuthentication` resolved it: the caller's own
   * (`AUTH_MODE=api-key`) or the server's (`jwt`); null when there is none.
   */
  apiKey: string | null;
  /** See {@link Context.principal}. */
  principal: string | null;
  /** See {@link Context.creditQuota}. */
  creditQuota?: CreditQuota | null;
  /** The HTTP request's signal: aborts the upstream requests when the client goes away. */
  signal?: AbortSignal;
  /** See {@link wantsFresh}. */
  fresh?: boolean;
  /** The request's traces of its upstream requests, when traces are on. */
  trace?: UpstreamTrace;
}

/**
 * Builds the context of one operation; the upstream key lives here and nowhere else. With `live`,
 * the operation can be a subscription (see `LiveSubscription`).
 */
export function createContext(
  config: Config,
  shared: SharedPipeline,
  request: RequestFacts,
  live?: LiveDeps,
): Context {
  const { principal, creditQuota = null, ...facts } = request;
  const open = (): UpstreamSession => {
    const session: UpstreamSession = new UpstreamSession(shared, {
      concurrency: config.upstreamConcurrency,
      maxRequests: config.maxUpstreamRequests,
      ...facts,
      deadlineMs: config.operationTimeoutMs,
      onPage: (endpoint, data) => context.records.remember(endpoint, data),
    });
    return session;
  };
  const upstream = open();
  const context: Context = {
    config,
    principal,
    creditQuota,
    quota: null,
    upstream,
    records: new RecordStore(upstream),
    fieldErrors: [],
    live: null,
  };
  if (live) {
    context.live = new LiveSubscription(live, {
      config,
      apiKey: facts.apiKey ?? '',
      principal,
      creditQuota,
      signal: facts.signal,
      session: () => context.upstream,
      renew: () => {
        const session = open();
        context.upstream = session;
        context.records = new RecordStore(session);
        context.fieldErrors = [];
        return session;
      },
    });
  }
  return context;
}
