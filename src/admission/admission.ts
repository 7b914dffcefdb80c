import { hash } from 'node:crypto';
import { printSchema, type ExecutionResult, type GraphQLError, type GraphQLSchema } from 'graphql';
import type { GraphQLParams } from 'graphql-yoga';
import type { Authenticate, Caller, HeaderReader } from '../auth/create-authenticator.js';
import type { Config } from '../config.js';
import {
  BUDGET_HEADER,
  budgetOf,
  budgetRefusal,
  ESTIMATE_HEADER,
  estimateOnly,
  type BudgetRules,
} from '../credits/budget-rules.js';
import type { UpstreamSession } from '../upstream/upstream-session.js';
import {
  NOTHING_SPENT,
  setCreditHeaders,
  type CreditExtensions,
} from '../credits/credit-extensions.js';
import type { QuotaHold } from '../credits/quota-account.js';
import { QuotaAccount, type QuotaReport, type Quotas } from '../credits/quota-account.js';
import type { Estimate } from '../estimate/estimate-operation.js';
import { callerRefusal, expiredRefusal } from './caller-refusal.js';
import { Documents } from './documents.js';
import type { Booking, DoorContext } from './door-context.js';
import { codesOf, outcomeOf, type OperationReport } from './operation-report.js';
import { SubscriptionCounts } from './subscription-counts.js';

type MaybePromise<T> = T | Promise<T>;

/** What {@link Admission} is built from. */
export interface AdmissionOptions {
  config: Config;
  /** Resolves a request's caller from its headers (`AUTH_MODE`). */
  authenticate: Authenticate;
  /** Where the quota buckets live, when any principal can have one. */
  quotas?: Quotas;
  /** The graph served: part of the name of every kept answer. */
  schema: GraphQLSchema;
  /** Where every operation's report goes: its log line and its metrics. */
  report?: (report: OperationReport) => void;
}

/**
 * How an operation about to run was admitted: its quota hold, if a quota applies (refused by
 * the quota: the hold of nothing that reports the bucket, and its refusal).
 */
export type Admitted =
  | { hold: QuotaHold | null; refusal?: GraphQLError }
  /** `X-Credit-Estimate: only`: the estimate is answered, nothing runs. */
  | { estimateOnly: true };

/** How a kept answer was admitted: the budget it was sent with and the quota it left. */
export interface KeptAdmission {
  budget: number;
  quota: QuotaReport | null;
}

/**
 * What every request, subscription and payload must pass before it runs, and what is booked
 * after, written once for every door: Yoga over HTTP (`plugins/use-admission.ts`,
 * `plugins/use-credits.ts`), the repeat-view front (`answers/serve-known-answers.ts`), graphql-ws
 * (`live/serve-websocket.ts`) and each subscription and its payloads (`live/`). A door is an
 * adapter that asks, in this order:
 *
 * 1. {@link caller}: who calls (an API key, or a verified token and the workspace's key), and
 *    until when ({@link expired});
 * 2. the message bounds: {@link maxMessageBytes} for HTTP bodies and WebSocket messages alike;
 * 3. {@link documents}: which document runs (`TRUSTED_DOCUMENTS`, or APQ);
 * 4. the query limits (GraphQL Armor, in the parse and validation every door runs);
 * 5. {@link admitRun}: the estimate against the budget and limits, then the quota reserved;
 *    {@link admitKept} for a kept answer; {@link subscriptions} counted per principal and
 *    connection;
 * 6. then the settlement and `extensions` (`credits/`), and {@link report}.
 */
export class Admission {
  readonly #options: AdmissionOptions;
  readonly documents: Documents;
  /** The budget and size rules of every operation. */
  readonly rules: BudgetRules;
  /** The largest HTTP body or WebSocket message accepted (`MAX_REQUEST_BYTES`). */
  readonly maxMessageBytes: number;
  /** Open subscriptions per principal and per connection. */
  readonly subscriptions: SubscriptionCounts;
  /**
   * Names everything that decides whether a request may run here: the schema and the admission
   * settings. Part of every kept answer's name, so that no instance serves an answer its own
   * rules would refuse (another `TRUSTED_DOCUMENTS`, `AUTH_MODE` or limit).
   */
  readonly version: string;

  constructor(options: AdmissionOptions) {
    const { config } = options;
    this.#options = options;
    this.documents = new Documents(config.trustedDocuments);
    this.rules = {
      defaultBudget: config.creditBudgetDefault,
      subscriptionBudget: config.subscriptionBudgetDefault,
      maxBudget: config.creditBudgetMax,
      maxRecords: config.maxResponseRecords,
      maxRequests: config.maxUpstreamRequests,
    };
    this.maxMessageBytes = config.maxRequestBytes;
    this.subscriptions = new SubscriptionCounts({
      perPrincipal: config.maxSubscriptionsPerPrincipal,
      perConnection: config.maxSubscriptionsPerConnection,
    });
    this.version = admissionVersion(config, options.schema);
  }

  /**
   * The caller of a request, from its headers (a WebSocket: its `connection_init`), or its coded
   * refusal (401, 403, 503): never thrown. Synchronous where nothing needs waiting for (an API
   * key, a token verified before). Each door asks once per request (or connection) and hands
   * the answer on.
   */
  caller(headers: HeaderReader): MaybePromise<Caller | GraphQLError> {
    let caller: MaybePromise<Caller>;
    try {
      caller = this.#options.authenticate(headers);
    } catch (error) {
      return callerRefusal(error);
    }
    return caller instanceof Promise ? caller.catch(callerRefusal) : caller;
  }

  /** The refusal of a caller no longer valid at `now` (its token expired), else null. */
  expired(caller: Caller, now = Date.now()): GraphQLError | null {
    return caller.validUntil <= now ? expiredRefusal(caller.validUntil) : null;
  }

  /**
   * The parameters of a GraphQL request over HTTP, admitted: its caller (the one a door resolved,
   * or resolved here from `headers`) and the document that runs ({@link documents}; `search`, a
   * GET's query string). Throws the caller's refusal or the document's. Synchronous where nothing
   * needs waiting for.
   */
  admitParams(
    door: DoorContext,
    params: GraphQLParams,
    headers: HeaderReader,
    search: URLSearchParams | null,
  ): MaybePromise<GraphQLParams> {
    const { booking } = door;
    if (booking && typeof params.operationName === 'string')
      booking.operation = params.operationName;
    if (door.refused) throw door.refused;
    const proceed = (caller: Caller | GraphQLError) => {
      if (caller instanceof Error) throw caller;
      door.caller = caller;
      return this.documents.resolve(params, search);
    };
    if (door.caller) return proceed(door.caller);
    const caller = this.caller(headers);
    return caller instanceof Promise ? caller.then(proceed) : proceed(caller);
  }

  /** The quota a caller's operations reserve from, or null when none applies to it. */
  account(caller: Caller | undefined): QuotaAccount | null {
    const { quotas, config } = this.#options;
    const quota = caller?.quota ?? config.creditQuota;
    if (!quotas || !caller || caller.principal === null || quota === null) return null;
    return new QuotaAccount(quotas, caller.principal, quota);
  }

  /**
   * Admits an operation about to run, its `estimate` made: its budget (`X-Credit-Budget`, else
   * the default for its kind, at most the ceiling) set on `session`, then refused when the
   * estimate is above it or above the limits, then its quota reserved (refused when the bucket
   * does not hold it). Its spending is then bounded by the budget and what the quota backs.
   */
  admitRun(
    session: UpstreamSession,
    caller: Caller | undefined,
    headers: HeaderReader,
    estimate: Estimate,
    subscription = false,
  ): MaybePromise<Admitted | GraphQLError> {
    const { rules } = this;
    const fallback = subscription ? rules.subscriptionBudget : rules.defaultBudget;
    const budget = budgetOf(headers.get(BUDGET_HEADER), rules, fallback);
    if (typeof budget !== 'number') return budget;
    session.budget.set(budget, estimate.credits);
    if (estimateOnly(headers.get(ESTIMATE_HEADER))) return { estimateOnly: true };
    const refused = budgetRefusal(estimate, budget, rules);
    if (refused) return refused;
    // A subscription reserves per payload, and its catch-up, from its own field (`live/`).
    const account = subscription ? null : this.account(caller);
    if (!account) return { hold: null };
    const backed = (hold: QuotaHold): Admitted => {
      if (hold.refusal) return { hold, refusal: hold.refusal };
      // Beyond its estimate a page takes more from the bucket first, and is cut when it has none.
      session.budget.backBy(hold.taken, hold.extend);
      return { hold };
    };
    const hold = account.reserve(estimate.credits);
    return hold instanceof Promise ? hold.then(backed) : backed(hold);
  }

  /**
   * Admits a kept answer of `estimate` as a run would be (its budget and quota must allow it),
   * taking nothing: the quota's reservation is given back at once. Null when it would be refused:
   * the request then runs, and is refused there with its figures.
   */
  admitKept(
    caller: Caller,
    headers: HeaderReader,
    estimate: number,
  ): MaybePromise<KeptAdmission | null> {
    const { rules } = this;
    const budget = budgetOf(headers.get(BUDGET_HEADER), rules, rules.defaultBudget);
    if (typeof budget !== 'number' || estimate > budget) return null;
    const account = this.account(caller);
    if (!account) return { budget, quota: null };
    const settled = (hold: QuotaHold): MaybePromise<KeptAdmission | null> => {
      if (hold.refusal) return null;
      const done = hold.settle(0);
      const admitted = () => ({ budget, quota: hold.report });
      return done instanceof Promise ? done.then(admitted) : admitted();
    };
    const hold = account.reserve(estimate, { counted: false });
    return hold instanceof Promise ? hold.then(settled) : settled(hold);
  }

  /**
   * A request's single result as it is answered: one that never reached execution (a syntax or
   * validation error, a refusal) says it spent nothing. Kept on its booking for its report.
   */
  answer(booking: Booking | undefined, result: ExecutionResult): ExecutionResult {
    let answered = result;
    if (!(answered.extensions as Partial<CreditExtensions> | undefined)?.credits) {
      answered = { ...answered, extensions: { ...answered.extensions, ...NOTHING_SPENT } };
    }
    if (booking) booking.result = answered;
    return answered;
  }

  /**
   * Books a request answered in one result ({@link answer}) with `status`: its response gets its
   * `X-Request-Id` and credit headers, and it is reported.
   */
  answered(
    booking: Booking,
    status: number,
    headers: { set(name: string, value: string): unknown },
  ): void {
    headers.set('x-request-id', booking.requestId);
    const { result } = booking;
    if (!result) return;
    const credits = (result.extensions as CreditExtensions | undefined) ?? NOTHING_SPENT;
    setCreditHeaders(headers, credits.credits);
    this.reportBooked(booking, status, booking.credits ?? creditsOnly(credits));
  }

  /** Reports a booked request, answered with `status`, as having spent `credits`. */
  reportBooked(booking: Booking, status: number, credits: CreditExtensions): void {
    const result = booking.result ?? {};
    this.report({
      requestId: booking.requestId,
      endpoint: booking.endpoint,
      door: booking.door,
      operation: booking.operation,
      type: booking.type,
      status,
      ms: performance.now() - booking.started,
      outcome: outcomeOf(result),
      codes: codesOf(result.errors),
      credits,
      traceId: booking.trace?.traceId,
    });
  }

  /** Books an operation's report: its log line and its metrics. */
  report(report: OperationReport): void {
    this.#options.report?.(report);
  }
}

/** The credit members of a result's extensions (it may carry others). */
function creditsOnly(extensions: CreditExtensions): CreditExtensions {
  const { credits, upstreamRequests, upstreamRetries, stale } = extensions;
  return { credits, upstreamRequests, upstreamRetries, ...(stale ? { stale } : {}) };
}

/** A hash of everything that decides whether a request may run: see {@link Admission.version}. */
function admissionVersion(config: Config, schema: GraphQLSchema): string {
  const rules = {
    authMode: config.authMode,
    issuer: config.jwtIssuer,
    audience: config.jwtAudience,
    trusted: config.trustedDocuments ? [...config.trustedDocuments].sort() : null,
    limits: [config.maxDepth, config.maxAliases, config.maxTokens, config.maxDirectives],
    sizes: [config.maxRequestBytes, config.maxResponseRecords, config.maxUpstreamRequests],
    budgets: [config.creditBudgetDefault, config.creditBudgetMax],
    pages: [config.defaultPageSize, config.maxPageSize],
  };
  const text = `${printSchema(schema)}\n${JSON.stringify(rules)}`;
  return hash('sha256', text, 'base64url').slice(0, 16);
}
