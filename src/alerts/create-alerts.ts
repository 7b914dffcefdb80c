import { join } from 'node:path';
import type { Admission } from '../admission/admission.js';
import type { App } from '../app.js';
import type { Config } from '../config.js';
import type { Estimator } from '../estimate/estimate-operation.js';
import type { Logger } from '../logging/create-logger.js';
import { AlertRunner } from './alert-runner.js';
import { Alerts } from './alerts.js';
import { attemptDelivery, type DeliveryEvents } from './attempt-delivery.js';
import { DeliveryLoop } from './delivery-loop.js';
import { createSeal } from './seal.js';
import { createWebhookSender } from './send-webhook.js';
import { SqliteAlertStore } from './sqlite-alert-store.js';

/** How many deliveries are attempted at once by one instance. */
const SENDERS = 8;

/** What {@link createAlerts} builds: the graph's alerts, and the runner and sender behind them. */
export interface AlertsPart {
  readonly alerts: Alerts;
  /** Starts running alerts and sending their deliveries, through `app` (once it is composed). */
  start(app: App): void;
  /** Deliveries waiting (the queue's depth). */
  depth(): number;
  /** Stops running and sending (the attempts in flight end), then closes the store. */
  close(): Promise<void>;
}

/** Whether webhooks may reach private addresses and `http://` (see `ALERT_PRIVATE_TARGETS`). */
export function privateTargetsAllowed(config: Config): boolean {
  return (
    config.alertPrivateTargets === 'on' ||
    (config.alertPrivateTargets === 'auto' && config.upstreamUrl === null)
  );
}

/**
 * The alerts of a gateway (`ALERTS=on`), from the settings: kept in the embedded SQLite file
 * (`ALERTS_DATA_DIR`), run on this instance through the same door as every subscription, their
 * deliveries sent by the embedded queue's loop.
 */
export function createAlerts(
  config: Config,
  deps: { admission: Admission; estimate: Estimator; logger: Logger; events?: DeliveryEvents },
): AlertsPart {
  const store = new SqliteAlertStore(
    join(config.alertsDataDir, 'alerts.sqlite'),
    createSeal(config.cursorSecret),
  );
  const allowPrivate = privateTargetsAllowed(config);
  let app: App | undefined;
  const sender = createWebhookSender({
    timeoutMs: config.alertDeliveryTimeoutMs,
    allowPrivate,
  });
  const rules = {
    retryForMs: config.alertRetrySeconds * 1000,
    retryBaseMs: config.alertRetryBaseMs,
    retryMaxMs: Math.max(config.alertRetryBaseMs, 60 * 60_000),
    disableAfter: config.alertDisableAfter,
  };
  const loop = new DeliveryLoop({
    queue: store,
    attempt: (delivery) =>
      attemptDelivery(delivery, {
        store,
        sender,
        rules,
        logger: deps.logger,
        events: deps.events,
      }),
    concurrency: SENDERS,
    leaseMs: config.alertDeliveryTimeoutMs + 5_000,
    onError: (error) =>
      deps.logger.warn(`alerts: an attempt failed to be booked (${(error as Error).message})`),
  });
  const alerts: Alerts = new Alerts({
    config,
    admission: deps.admission,
    store,
    rules: {
      maxPerPrincipal: config.alertsMaxPerPrincipal,
      dailyBudgetDefault: config.alertDailyBudgetDefault,
      maxBudget: config.creditBudgetMax,
      allowPrivate,
    },
    estimate: deps.estimate,
    app: () => app,
    changed: (id) => {
      runner.stop(id);
      runner.wake();
      loop.wake();
    },
  });
  const runner = new AlertRunner({
    store,
    admission: deps.admission,
    app: () => app,
    callerOf: (alert) => alerts.callerOf(alert),
    added: () => loop.wake(),
    logger: deps.logger,
  });
  return {
    alerts,
    start(composed) {
      app = composed;
      runner.start();
      loop.start();
    },
    depth: () => loop.depth,
    async close() {
      await runner.close();
      await loop.close();
      await sender.close();
      await store.close();
    },
  };
}
