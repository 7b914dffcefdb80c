import { ErrorCode, gatewayError } from '../errors.js';
import { pageCursor, type Alert, type Delivery, type Page } from '../alerts/alert-store.js';
import { dayOf } from '../alerts/budget-day.js';
import type { AlertsApi } from '../alerts/alerts-api.js';
import type { Context } from '../context.js';
import { LOCAL_COST } from '../estimate/credit-cost.js';
import { invalidArgument } from '../errors.js';
import { builder } from './builder.js';

/** The most items a page of alerts or deliveries holds. */
const MAX_FIRST = 100;

/** The alerts of the context, or the refusal where they are not served (`ALERTS=off`). */
function alertsOf(context: Context): AlertsApi {
  if (!context.alerts) {
    throw gatewayError(
      ErrorCode.NOT_FOUND,
      'Alerts are not served by this gateway (ALERTS=off, or no SQLite binding: its log says which).',
    );
  }
  // What the caller's alerts are now, not when a repeat view's answer was kept.
  context.ownState = true;
  return context.alerts;
}

/** `after` as the lists wrote it (`endCursor`: a time and an id), or INVALID_INPUT. */
function afterOf(after: string | null | undefined): string | null {
  if (after == null) return null;
  const text = Buffer.from(after, 'base64url').toString();
  if (after.length > 200 || !/^\d{1,16}\n[\w-]{1,64}$/.test(text)) {
    throw invalidArgument('after', 'must be an endCursor of this list');
  }
  return after;
}

function firstOf(first: number | null | undefined): number {
  const value = first ?? 20;
  if (!Number.isInteger(value) || value < 1 || value > MAX_FIRST) {
    throw invalidArgument('first', `must be from 1 to ${MAX_FIRST} (got ${value})`);
  }
  return value;
}

const iso = (time: number | null) => (time === null ? null : new Date(time).toISOString());

const AlertStatus = builder.enumType('AlertStatus', {
  description: 'Whether an alert runs.',
  values: {
    ACTIVE: { description: 'It runs: each new matching record is delivered.' },
    WAITING: {
      description:
        "Its daily budget or its owner's quota is spent (see `reason`): it resumes at `waitingUntil` from where it stopped; nothing is lost.",
    },
    PAUSED: { description: 'Paused by its owner: `resumeAlert` resumes it from where it stopped.' },
    DISABLED: {
      description:
        'Disabled by the gateway: its receiver answered 410 Gone, too many deliveries in a row failed, or its key was refused (see `reason`). `resumeAlert` tries again.',
    },
  } as const,
});

const DeliveryStatus = builder.enumType('AlertDeliveryStatus', {
  description: 'Where a delivery stands.',
  values: {
    PENDING: { description: 'Not acknowledged yet: attempted, or retried at `nextAttemptAt`.' },
    DELIVERED: { description: 'Its receiver answered 2xx.' },
    FAILED: { description: 'Given up: `ALERT_RETRY_SECONDS` passed, or its alert was disabled.' },
  } as const,
});

const DeliveryRef = builder.objectRef<Delivery>('AlertDelivery').implement({
  description:
    "One record's delivery to an alert's webhook: a POST of the payload a subscriber would receive, signed as Standard Webhooks signs. Retries never cost a credit.",
  fields: (t) => ({
    id: t.exposeID('id', {
      description: 'Its `webhook-id`: the same on every attempt (a receiver dedupes on it).',
    }),
    recordId: t.exposeString('recordId', { description: "The record's `uuid`." }),
    status: t.field({
      type: DeliveryStatus,
      resolve: (delivery) => delivery.status.toUpperCase() as 'PENDING' | 'DELIVERED' | 'FAILED',
    }),
    attempts: t.exposeInt('attempts'),
    lastHttpStatus: t.int({
      nullable: true,
      description: "The receiver's status at the last attempt; null when it did not answer.",
      resolve: (delivery) => delivery.lastStatus,
    }),
    lastError: t.exposeString('lastError', {
      nullable: true,
      description: 'Why the last attempt failed, if it did.',
    }),
    nextAttemptAt: t.field({
      type: 'DateTime',
      nullable: true,
      resolve: (delivery) => iso(delivery.nextAttemptAt),
    }),
    deliveredAt: t.field({
      type: 'DateTime',
      nullable: true,
      resolve: (delivery) => iso(delivery.deliveredAt),
    }),
    createdAt: t.field({ type: 'DateTime', resolve: (delivery) => iso(delivery.createdAt)! }),
  }),
});

/** A page of items as a Relay connection. */
function connectionOf<T extends { id: string; createdAt: number }>(page: Page<T>) {
  return {
    edges: page.items.map((node) => ({ node, cursor: pageCursor(node) })),
    pageInfo: {
      hasNextPage: page.next !== null,
      hasPreviousPage: false,
      startCursor: null,
      endCursor: page.next,
    },
  };
}

const DeliveryConnection = builder.connectionObject(
  { type: DeliveryRef, name: 'AlertDeliveryConnection' },
  { name: 'AlertDeliveryEdge' },
);

const AlertRef = builder.objectRef<Alert>('Alert').implement({
  description:
    "A saved subscription whose records are delivered to a webhook, run by the gateway for its owner: one of `fundingEventAdded`, `execMoveAdded`, `acquisitionAdded` with its filters and selection. Each new matching record costs its credit once (the pollers are the subscriptions'), within the alert's daily budget and its owner's quota.",
  fields: (t) => ({
    id: t.exposeID('id'),
    subscription: t.exposeString('query', { description: 'The subscription document it runs.' }),
    operationName: t.exposeString('operationName', { nullable: true }),
    variables: t.field({ type: 'JSON', resolve: (alert) => alert.variables }),
    url: t.exposeString('url', { description: 'Where its deliveries are POSTed.' }),
    status: t.field({
      type: AlertStatus,
      resolve: (alert) =>
        alert.status === 'active' && alert.waitingUntil !== null && alert.waitingUntil > Date.now()
          ? 'WAITING'
          : (alert.status.toUpperCase() as 'ACTIVE' | 'PAUSED' | 'DISABLED'),
    }),
    reason: t.exposeString('reason', {
      nullable: true,
      description: 'Why it waits or is disabled.',
    }),
    waitingUntil: t.field({
      type: 'DateTime',
      nullable: true,
      resolve: (alert) =>
        alert.waitingUntil !== null && alert.waitingUntil > Date.now()
          ? iso(alert.waitingUntil)
          : null,
    }),
    dailyBudget: t.exposeInt('dailyBudget', {
      description: 'Credits it may spend per day (UTC): a credit per record, plus nested lookups.',
    }),
    spentToday: t.int({
      resolve: (alert) => (alert.spentDay === dayOf(Date.now()) ? alert.spent : 0),
    }),
    createdAt: t.field({ type: 'DateTime', resolve: (alert) => iso(alert.createdAt)! }),
    deliveries: t.field({
      type: DeliveryConnection,
      description: 'Its deliveries, newest first.',
      args: { first: t.arg.int(), after: t.arg.string() },
      extensions: LOCAL_COST,
      resolve: async (alert, args, context) =>
        connectionOf(
          await alertsOf(context).deliveries(alert.id, firstOf(args.first), afterOf(args.after)),
        ),
    }),
  }),
});

const AlertConnection = builder.connectionObject(
  { type: AlertRef, name: 'AlertConnection' },
  { name: 'AlertEdge' },
);

builder.queryFields((t) => ({
  alerts: t.field({
    type: AlertConnection,
    description: 'Your alerts, newest first.',
    args: { first: t.arg.int(), after: t.arg.string() },
    extensions: LOCAL_COST,
    resolve: async (_root, args, context) =>
      connectionOf(
        await alertsOf(context).list(context.caller, firstOf(args.first), afterOf(args.after)),
      ),
  }),
  alert: t.field({
    type: AlertRef,
    nullable: true,
    description: "One of your alerts by its id; null for another's, or one deleted.",
    args: { id: t.arg.id({ required: true }) },
    extensions: LOCAL_COST,
    resolve: (_root, args, context) => alertsOf(context).get(context.caller, String(args.id)),
  }),
}));

const CreateAlertInput = builder.inputType('CreateAlertInput', {
  fields: (t) => ({
    subscription: t.string({
      description:
        'The subscription document: one of `fundingEventAdded`, `execMoveAdded`, `acquisitionAdded`, its filters and selection (variables allowed). With TRUSTED_DOCUMENTS, send `documentId` instead.',
    }),
    documentId: t.string({ description: 'The id of a trusted document (TRUSTED_DOCUMENTS).' }),
    operationName: t.string(),
    variables: t.field({ type: 'JSON' }),
    url: t.string({
      required: true,
      description: 'The webhook: an https URL whose host is not a private address.',
    }),
    dailyBudget: t.int({
      description: 'Credits it may spend per day (UTC); default ALERT_DAILY_BUDGET_DEFAULT.',
    }),
  }),
});

const WithSecret = builder
  .objectRef<{ alert: Alert; secret: string }>('AlertWithSecret')
  .implement({
    description: 'An alert and its signing secret, shown here only: keep it to verify deliveries.',
    fields: (t) => ({
      alert: t.field({ type: AlertRef, resolve: (made) => made.alert }),
      secret: t.exposeString('secret', {
        description:
          'The Standard Webhooks secret (`whsec_…`) its deliveries are signed with. Shown once.',
      }),
    }),
  });

builder.mutationType({
  description: 'Alerts: saved subscriptions delivered as signed webhooks.',
});

builder.mutationFields((t) => ({
  createAlert: t.field({
    type: WithSecret,
    args: { input: t.arg({ type: CreateAlertInput, required: true }) },
    resolve: (_root, { input }, context) =>
      alertsOf(context).create(context.caller, {
        ...input,
        variables: (input.variables ?? null) as Record<string, unknown> | null,
      }),
  }),
  pauseAlert: t.field({
    type: AlertRef,
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, context) => alertsOf(context).pause(context.caller, String(args.id)),
  }),
  resumeAlert: t.field({
    type: AlertRef,
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, context) => alertsOf(context).resume(context.caller, String(args.id)),
  }),
  deleteAlert: t.boolean({
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, context) => alertsOf(context).delete(context.caller, String(args.id)),
  }),
  rotateAlertSecret: t.field({
    type: WithSecret,
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, context) => alertsOf(context).rotate(context.caller, String(args.id)),
  }),
  redeliverAlertDelivery: t.field({
    type: DeliveryRef,
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, context) => alertsOf(context).redeliver(context.caller, String(args.id)),
  }),
}));
