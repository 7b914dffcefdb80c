import { createHmac, randomBytes } from 'node:crypto';
import { getOperationAST, type GraphQLError } from 'graphql';
import { getVariableValues } from 'graphql/execution/values.js';
import type { Admission } from '../admission/admission.js';
import type { App } from '../app.js';
import type { Caller } from '../auth/create-authenticator.js';
import { upstreamKeyOf, upstreamKeySource } from '../auth/upstream-keys.js';
import type { Config } from '../config.js';
import { budgetRefusal } from '../credits/budget-rules.js';
import { parseCreditQuota } from '../credits/quota/credit-quota.js';
import { ErrorCode, gatewayError, invalidArgument } from '../errors.js';
import type { Estimator } from '../estimate/estimate-operation.js';
import type { Alert, AlertStore, Delivery, Page } from './alert-store.js';
import type { AlertInput, AlertsApi, WithSecret } from './alerts-api.js';
import { dayOf } from './budget-day.js';
import { checkTarget, TargetRefused } from './target-guard.js';

/** The subscription fields an alert may follow. */
const ALERT_FIELDS = new Set(['fundingEventAdded', 'execMoveAdded', 'acquisitionAdded']);

/** The settings alerts read. */
export interface AlertRules {
  maxPerPrincipal: number;
  dailyBudgetDefault: number;
  maxBudget: number;
  /** Loopback, private and `http://` targets allowed (tests, the sandbox). */
  allowPrivate: boolean;
}

/** What the alert operations of the graph need. */
export interface AlertsOptions {
  config: Config;
  admission: Admission;
  store: AlertStore;
  rules: AlertRules;
  /** The estimate of a subscription's payload (the main schema's). */
  estimate: Estimator;
  /** The app whose parse and validation an alert's document passes (set once composed). */
  app: () => App | undefined;
  /** An alert was made, resumed or changed: the runner looks now. */
  changed: (id: string) => void;
  /** A delivery was made pending again: the queue sends it. */
  redelivered: (delivery: Delivery) => void;
}

/** A new signing secret, as Standard Webhooks writes one: `whsec_` and 24 random bytes. */
function newSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/** NOT_FOUND for an alert (or delivery) id the caller does not own: another's is not found. */
function notFound(what: string): GraphQLError {
  return gatewayError(
    ErrorCode.NOT_FOUND,
    `No ${what} of yours has this id: it was deleted, or it is another caller's.`,
  );
}

/**
 * The alerts of the graph, for their owners: made from a subscription document and an `https` URL,
 * checked as every door checks a request (the caller; the document rules, `TRUSTED_DOCUMENTS`
 * included, through `Admission.documents`; its parse and validation through the app's envelop,
 * so the query limits; its payload's estimate against its daily budget, `budgetRefusal`), and
 * kept under a hash of the owner's principal: a caller sees and changes only its own (another's
 * id is not found). The owner's key is sealed with the alert, for the runs (`AlertStore`).
 */
export class Alerts implements AlertsApi {
  readonly #options: AlertsOptions;

  constructor(options: AlertsOptions) {
    this.#options = options;
  }

  /** The owner name of a caller: an HMAC of its principal, never the principal. */
  ownerOf(caller: Caller | undefined): string {
    if (!caller?.principal || !caller.upstreamKey) {
      throw gatewayError(
        ErrorCode.UNAUTHORIZED,
        'Alerts are your own: send your API key in the X-API-Key header (or your token, with AUTH_MODE=jwt).',
      );
    }
    return createHmac('sha256', this.#options.config.cursorSecret)
      .update(`alerts\n${caller.principal}`)
      .digest('base64url');
  }

  /** The caller an alert runs as, now: its key (a workspace's, looked up again in jwt mode). */
  callerOf(alert: Alert): Caller | null {
    const { config } = this.#options;
    const { caller } = alert;
    let upstreamKey = caller.upstreamKey;
    if (config.authMode === 'jwt') {
      const source = upstreamKeySource(config);
      upstreamKey =
        source &&
        upstreamKeyOf(source, { [config.jwtWorkspaceClaim]: caller.workspace ?? undefined });
    }
    if (!upstreamKey) return null;
    const quota = caller.quota ? parseCreditQuota(caller.quota) : null;
    return {
      principal: caller.principal,
      upstreamKey,
      ...(quota ? { quota } : {}),
      // An alert runs for its owner without a client: its owner's token is not held.
      validUntil: Infinity,
    };
  }

  async create(caller: Caller | undefined, input: AlertInput): Promise<WithSecret> {
    const { store, rules, admission, config } = this.#options;
    const owner = this.ownerOf(caller);
    if ((await store.count(owner)) >= rules.maxPerPrincipal) {
      throw gatewayError(
        ErrorCode.TOO_MANY_SUBSCRIPTIONS,
        `You have ${rules.maxPerPrincipal} alerts, the most allowed (ALERTS_MAX_PER_PRINCIPAL): delete one first.`,
        { scope: 'alerts', limit: rules.maxPerPrincipal },
      );
    }
    const dailyBudget = input.dailyBudget ?? rules.dailyBudgetDefault;
    if (!Number.isInteger(dailyBudget) || dailyBudget < 1 || dailyBudget > rules.maxBudget) {
      throw invalidArgument(
        'input.dailyBudget',
        `must be a whole number of credits from 1 to ${rules.maxBudget} (CREDIT_BUDGET_MAX)`,
      );
    }
    const params = admission.documents.resolve({
      query: input.subscription ?? undefined,
      operationName: input.operationName ?? undefined,
      ...(input.documentId ? { documentId: input.documentId } : {}),
    });
    const query = params.query;
    if (!query) {
      throw invalidArgument('input.subscription', 'is required: the subscription document to run');
    }
    const variables = this.#check(
      query,
      input.operationName ?? null,
      input.variables ?? {},
      dailyBudget,
    );
    const url = await checkTarget(input.url, rules.allowPrivate).catch((error: unknown) => {
      throw invalidArgument(
        'input.url',
        error instanceof TargetRefused ? error.message.replace(/\.$/, '') : 'is not reachable',
      );
    });
    const secret = newSecret();
    const now = Date.now();
    const alert: Alert = {
      id: `alt_${randomBytes(12).toString('base64url')}`,
      owner,
      caller: {
        principal: caller!.principal,
        upstreamKey: config.authMode === 'jwt' ? null : caller!.upstreamKey,
        workspace: config.authMode === 'jwt' ? workspaceOf(caller!) : null,
        quota: caller!.quota
          ? `${caller!.quota.credits}/${windowName(caller!.quota.windowSeconds)}`
          : null,
      },
      query,
      operationName: input.operationName ?? null,
      variables,
      url: url.toString(),
      secret,
      dailyBudget,
      status: 'active',
      reason: null,
      waitingUntil: null,
      watermark: null,
      spentDay: dayOf(now),
      spent: 0,
      failures: 0,
      createdAt: now,
    };
    await store.create(alert);
    this.#options.changed(alert.id);
    return { alert, secret };
  }

  /**
   * The document of an alert checked as a request's is: it parses and validates (the query
   * limits apply), it is a subscription of one of the alert fields, its variables fit, and one
   * payload's estimate fits the daily budget. Its coerced variables.
   */
  #check(
    query: string,
    operationName: string | null,
    variables: Record<string, unknown>,
    dailyBudget: number,
  ): Record<string, unknown> {
    const app = this.#options.app();
    if (!app) throw new Error('Alerts are not served before the app is composed.');
    const enveloped = app.getEnveloped({ request: new Request('http://gateway.internal/graphql') });
    let document;
    try {
      document = enveloped.parse(query);
    } catch (error) {
      throw error as GraphQLError;
    }
    const errors = enveloped.validate(enveloped.schema, document);
    if (errors.length > 0) throw errors[0]!;
    const operation = getOperationAST(document, operationName);
    const fields = operation?.selectionSet.selections ?? [];
    const field = fields[0];
    if (
      operation?.operation !== 'subscription' ||
      fields.length !== 1 ||
      field?.kind !== 'Field' ||
      !ALERT_FIELDS.has(field.name.value)
    ) {
      throw invalidArgument(
        'input.subscription',
        `must be a subscription of one field among ${[...ALERT_FIELDS].join(', ')}`,
      );
    }
    const coerced = getVariableValues(
      enveloped.schema,
      operation.variableDefinitions ?? [],
      variables,
      { maxErrors: 10 },
    );
    if (coerced.errors) {
      throw invalidArgument('input.variables', coerced.errors.map((e) => e.message).join('; '));
    }
    const estimate = this.#options.estimate(document, operationName, coerced.coerced);
    const refused = budgetRefusal(estimate, dailyBudget, this.#options.admission.rules);
    if (refused) {
      throw gatewayError(
        ErrorCode.CREDIT_BUDGET_EXCEEDED,
        `One delivery of this alert is estimated at ${estimate.credits} credits, above its daily budget of ${dailyBudget}: ask for fewer nested records, or give it a larger dailyBudget.`,
        { estimate: estimate.credits, budget: dailyBudget },
      );
    }
    return variables;
  }

  async get(caller: Caller | undefined, id: string): Promise<Alert | undefined> {
    return this.#options.store.get(this.ownerOf(caller), id);
  }

  async list(
    caller: Caller | undefined,
    first: number,
    after: string | null,
  ): Promise<Page<Alert>> {
    return this.#options.store.list(this.ownerOf(caller), first, after);
  }

  async #own(caller: Caller | undefined, id: string): Promise<Alert> {
    const alert = await this.get(caller, id);
    if (!alert) throw notFound('alert');
    return alert;
  }

  async pause(caller: Caller | undefined, id: string): Promise<Alert> {
    const alert = await this.#own(caller, id);
    await this.#options.store.update(id, { status: 'paused', reason: 'paused by its owner' });
    this.#options.changed(id);
    return { ...alert, status: 'paused', reason: 'paused by its owner' };
  }

  async resume(caller: Caller | undefined, id: string): Promise<Alert> {
    const alert = await this.#own(caller, id);
    const change = { status: 'active' as const, reason: null, waitingUntil: null, failures: 0 };
    await this.#options.store.update(id, change);
    this.#options.changed(id);
    return { ...alert, ...change };
  }

  async delete(caller: Caller | undefined, id: string): Promise<boolean> {
    const deleted = await this.#options.store.delete(this.ownerOf(caller), id);
    if (!deleted) throw notFound('alert');
    this.#options.changed(id);
    return true;
  }

  async rotate(caller: Caller | undefined, id: string): Promise<WithSecret> {
    const alert = await this.#own(caller, id);
    const secret = newSecret();
    await this.#options.store.update(id, { secret });
    return { alert: { ...alert, secret }, secret };
  }

  /** Sends a delivery again (a new attempt now, its attempts kept, the same `webhook-id`). */
  async redeliver(caller: Caller | undefined, deliveryId: string): Promise<Delivery> {
    const { store } = this.#options;
    const delivery = await store.getDelivery(deliveryId);
    const alert = delivery && (await this.get(caller, delivery.alertId));
    if (!delivery || !alert) throw notFound('delivery');
    const change = { status: 'pending' as const, nextAttemptAt: Date.now(), createdAt: Date.now() };
    await store.updateDelivery(deliveryId, change);
    const pending = { ...delivery, ...change };
    this.#options.redelivered(pending);
    return pending;
  }

  deliveries(alertId: string, first: number, after: string | null): Promise<Page<Delivery>> {
    return this.#options.store.deliveries(alertId, first, after);
  }
}

/** The workspace of a jwt caller, from its principal (`[workspace, sub]`). */
function workspaceOf(caller: Caller): string | null {
  try {
    const [workspace] = JSON.parse(caller.principal ?? '[]') as [unknown];
    return typeof workspace === 'string' ? workspace : null;
  } catch {
    return null;
  }
}

function windowName(seconds: number): string {
  return seconds === 60 ? 'minute' : seconds === 3_600 ? 'hour' : 'day';
}
