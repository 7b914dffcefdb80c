import { createHash } from 'node:crypto';
import type { ExecutionArgs, ExecutionResult, GraphQLError } from 'graphql';
import type { Admission } from '../admission/admission.js';
import type { DoorContext } from '../admission/door-context.js';
import { requestIdOf } from '../admission/operation-report.js';
import type { App } from '../app.js';
import type { Caller } from '../auth/create-authenticator.js';
import type { Context } from '../context.js';
import type { Logger } from '../logging/create-logger.js';
import type { Alert, AlertStore, Delivery } from './alert-store.js';
import { dayOf, nextDay } from './budget-day.js';

/** A delivery's id (`webhook-id`): the same for one alert and one record, whoever makes it. */
export function deliveryId(alertId: string, recordId: string): string {
  return `msg_${createHash('sha256').update(`${alertId}\n${recordId}`).digest('base64url').slice(0, 27)}`;
}

/** What a runner needs besides the alerts: the door it runs them through. */
export interface AlertRunnerOptions {
  store: AlertStore;
  admission: Admission;
  /** The app whose envelop runs each alert's subscription (set once it is composed). */
  app: () => App | undefined;
  /** The caller an alert runs as (its key resolved now: `UPSTREAM_KEYS_FILE` may have changed). */
  callerOf: (alert: Alert) => Caller | null;
  /** A delivery was written pending: the queue sends it. */
  added: (delivery: Delivery) => void;
  logger: Logger;
  /** How often the alerts to run are looked for. */
  sweepMs?: number;
  /**
   * Whether this instance may run `alert` now (with Redis, the holder of its lease): undefined
   * when that is not known now (Redis did not answer), and a run goes on as it was.
   */
  claim?: (alert: Alert) => Promise<boolean | undefined>;
}

/** What an alert does when its subscription ended with a code: wait until, or disable, and why. */
function outcomeOf(
  code: string,
  error: GraphQLError | undefined,
  now: number,
): { waitUntil: number; reason: string } | { disable: string } {
  switch (code) {
    case 'CREDIT_BUDGET_EXHAUSTED':
      return {
        waitUntil: nextDay(now),
        reason: 'its daily budget is spent: it resumes tomorrow (UTC) from where it stopped',
      };
    case 'CREDIT_QUOTA_EXCEEDED': {
      const after = Number(error?.extensions?.['retryAfter'] ?? 60);
      return {
        waitUntil: now + Math.max(1, after) * 1000,
        reason:
          "its owner's credit quota is spent: it resumes when the quota allows, from where it stopped",
      };
    }
    case 'UNAUTHORIZED':
      return {
        disable: 'the service refused its key (401): update the key, then create the alert again',
      };
    case 'FORBIDDEN':
      return { disable: 'the service or the gateway refused its workspace (403)' };
    case 'PAYMENT_REQUIRED':
      return {
        waitUntil: now + 60 * 60_000,
        reason:
          'the workspace has no credits left (402): it tries again in an hour, from where it stopped',
      };
    default:
      return {
        waitUntil: now + 60_000,
        reason: `its subscription stopped (${code}): it resumes in a minute, from where it stopped`,
      };
  }
}

/**
 * Runs each active alert as a subscription of its owner, through the same door every operation
 * passes (the app's envelop: the document's limits, the estimate, the budget, the quota; the
 * admission's counts and report), on this instance: its daily budget left is the subscription's
 * budget, and it resumes after the last record it took (`resumeFrom`), so nothing discovered
 * while it waited or the gateway was down is missed. Each payload is written to the store as a
 * delivery, with the alert's new watermark and spending, at once (`addDelivery`): a record is
 * paid by the poller once, and a delivery is never paid again.
 */
export class AlertRunner {
  readonly #options: AlertRunnerOptions;
  readonly #running = new Map<string, { stop(): void }>();
  #timer: NodeJS.Timeout | undefined;
  #sweeping = false;
  #closed = false;

  constructor(options: AlertRunnerOptions) {
    this.#options = options;
  }

  start(): void {
    this.#timer = setInterval(() => this.wake(), this.#options.sweepMs ?? 2_000);
    this.#timer.unref();
    this.wake();
  }

  /** Looks for alerts to run (or to stop) now. */
  wake(): void {
    if (this.#sweeping || this.#closed) return;
    this.#sweeping = true;
    this.#sweep()
      .catch((error: unknown) => {
        this.#options.logger.warn(`alerts: a sweep failed (${(error as Error).message})`);
      })
      .finally(() => {
        this.#sweeping = false;
      });
  }

  /** Stops an alert's run on this instance (paused, deleted, changed). */
  stop(id: string): void {
    this.#running.get(id)?.stop();
    this.#running.delete(id);
  }

  get running(): number {
    return this.#running.size;
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    for (const id of [...this.#running.keys()]) this.stop(id);
  }

  async #sweep(): Promise<void> {
    const now = Date.now();
    const runnable = await this.#options.store.runnable(now);
    const ids = new Set(runnable.map((alert) => alert.id));
    for (const id of [...this.#running.keys()]) if (!ids.has(id)) this.stop(id);
    for (const alert of runnable) {
      if (!this.#options.app()) continue;
      // With Redis, each sweep renews the leases of the alerts run here: one lost, its run stops.
      // Unknown (Redis did not answer): a run goes on, none starts; a restart would pay its
      // catch-up again.
      const held = this.#options.claim ? await this.#options.claim(alert) : true;
      if (held === false) this.stop(alert.id);
      else if (held && !this.#running.has(alert.id)) this.#run(alert);
    }
  }

  #run(alert: Alert): void {
    let stopped = false;
    let iterator: AsyncIterator<ExecutionResult> | undefined;
    const handle = {
      stop: () => {
        stopped = true;
        void iterator?.return?.();
      },
    };
    this.#running.set(alert.id, handle);
    const done = () => {
      if (this.#running.get(alert.id) === handle) this.#running.delete(alert.id);
    };
    void (async () => {
      try {
        const started = await this.#subscribe(alert);
        if (!started) return;
        const { result, context } = started;
        if (!(Symbol.asyncIterator in result)) {
          await this.#ended(alert, result);
          return;
        }
        iterator = result[Symbol.asyncIterator]();
        let spent = alert.spentDay === dayOf(Date.now()) ? alert.spent : 0;
        for (;;) {
          if (stopped) return;
          const next = await iterator.next();
          if (next.done || stopped) return;
          const payload = next.value;
          if (isEnd(payload)) {
            await this.#ended(alert, payload);
            return;
          }
          spent += Number(
            (payload.extensions as { credits?: { used?: number } } | undefined)?.credits?.used ?? 0,
          );
          const record = context.subscription?.record;
          if (record) await this.#deliver(alert, record, payload, spent);
        }
      } catch (error) {
        this.#options.logger.warn(
          { alert: alert.id },
          `alerts: a run stopped (${(error as Error).message}); it resumes at the next sweep`,
        );
      } finally {
        done();
      }
    })();
  }

  /** Starts `alert`'s subscription through the app's envelop; undefined when it cannot run now. */
  async #subscribe(
    alert: Alert,
  ): Promise<
    { result: AsyncIterable<ExecutionResult> | ExecutionResult; context: Context } | undefined
  > {
    const app = this.#options.app();
    const caller = this.#options.callerOf(alert);
    if (!app) return undefined;
    if (!caller) {
      await this.#options.store.update(alert.id, {
        status: 'disabled',
        reason: "its owner's workspace has no key on this gateway any more",
      });
      return undefined;
    }
    const now = Date.now();
    const today = dayOf(now);
    const spent = alert.spentDay === today ? alert.spent : 0;
    if (alert.spentDay !== today)
      await this.#options.store.update(alert.id, { spentDay: today, spent: 0 });
    const left = alert.dailyBudget - spent;
    if (left < 1) {
      await this.#wait(alert, nextDay(now), 'its daily budget is spent: it resumes tomorrow (UTC)');
      return undefined;
    }
    const booking = {
      requestId: requestIdOf(undefined),
      started: performance.now(),
      endpoint: '/graphql',
      door: 'alert' as const,
      operation: alert.operationName,
      type: 'subscription',
    };
    const door: DoorContext = {
      caller,
      booking,
      resumeFrom: alert.watermark ?? resumeOf(alert),
    };
    const request = new Request('http://gateway.internal/graphql', {
      method: 'POST',
      headers: { 'x-credit-budget': String(left) },
    });
    const params = {
      query: alert.query,
      operationName: alert.operationName ?? undefined,
      variables: alert.variables,
    };
    const enveloped = app.getEnveloped({ ...door, request, params });
    const document = enveloped.parse(alert.query);
    const errors = enveloped.validate(enveloped.schema, document);
    if (errors.length > 0) {
      await this.#options.store.update(alert.id, {
        status: 'disabled',
        reason: `its document no longer validates: ${errors[0]!.message}`,
      });
      return undefined;
    }
    const context = (await enveloped.contextFactory()) as unknown as Context;
    const args: ExecutionArgs = {
      schema: enveloped.schema,
      document,
      operationName: alert.operationName,
      variableValues: alert.variables,
      contextValue: context,
    };
    const result = (await enveloped.subscribe(args)) as
      AsyncIterable<ExecutionResult> | ExecutionResult;
    return { result, context };
  }

  /** Writes one record's payload as a delivery, with the alert's watermark and spending. */
  async #deliver(
    alert: Alert,
    record: { readonly id: string; readonly discoveredAt: string | null },
    payload: ExecutionResult,
    spent: number,
  ): Promise<void> {
    const now = Date.now();
    const delivery: Delivery = {
      id: deliveryId(alert.id, record.id),
      alertId: alert.id,
      recordId: record.id,
      body: JSON.stringify(payload),
      status: 'pending',
      attempts: 0,
      lastStatus: null,
      lastError: null,
      nextAttemptAt: now,
      deliveredAt: null,
      createdAt: now,
      discoveredAt: record.discoveredAt ? Date.parse(record.discoveredAt) : null,
    };
    const added = await this.#options.store.addDelivery(delivery, record.discoveredAt, spent);
    if (added) this.#options.added(delivery);
  }

  /** The subscription ended with `result`'s error: the alert waits, or is disabled, with why. */
  async #ended(alert: Alert, result: ExecutionResult): Promise<void> {
    const error = result.errors?.[0];
    const code = String(error?.extensions?.['code'] ?? 'NONE');
    const outcome = outcomeOf(code, error, Date.now());
    if ('disable' in outcome) {
      await this.#options.store.update(alert.id, { status: 'disabled', reason: outcome.disable });
      this.#options.logger.warn({ alert: alert.id, code }, 'alerts: an alert was disabled');
    } else {
      await this.#wait(alert, outcome.waitUntil, outcome.reason);
    }
  }

  async #wait(alert: Alert, until: number, reason: string): Promise<void> {
    await this.#options.store.update(alert.id, { waitingUntil: until, reason });
  }
}

/** Where an alert that took no record yet starts: its document's `since`, else its creation. */
function resumeOf(alert: Alert): string {
  const since = alert.variables['since'];
  return typeof since === 'string' ? since : new Date(alert.createdAt).toISOString();
}

/** True for the payload that ends a subscription: its one field null, with the error why. */
function isEnd(payload: ExecutionResult): boolean {
  if (!payload.errors?.length) return false;
  const data = payload.data;
  return !data || Object.values(data).every((value) => value === null);
}
