import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { Admission } from '../admission/admission.js';
import type { App } from '../app.js';
import type { Config } from '../config.js';
import type { Estimator } from '../estimate/estimate-operation.js';
import type { Logger } from '../logging/create-logger.js';
import type { RedisLink } from '../redis/redis-link.js';
import { sharedPrefix } from '../redis/shared-redis.js';
import type { Alert, Delivery } from './alert-store.js';
import type { DeliveryQueue } from './delivery-queue.js';
import { RedisAlertStore } from './redis-alert-store.js';
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

/** How long an instance runs an alert without renewing its lease (with Redis). */
const RUN_LEASE_MS = 10_000;

/** Takes or renews the lease of an alert's run: 1 when this instance holds it. */
const CLAIM = `
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
if holder then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
`;

/**
 * The alerts of a gateway (`ALERTS=on`), from the settings. Without `REDIS_URL`: kept in the
 * embedded SQLite file (`ALERTS_DATA_DIR`), run on this instance (with `WORKERS` > 1, each by the
 * worker holding its lease in the file), their deliveries sent by the embedded loop. With it: kept in Redis, each alert run by the instance holding its lease
 * (renewed at each sweep, taken over within {@link RUN_LEASE_MS} of its holder's death), each
 * delivery sent by one instance (BullMQ). Either way an alert runs through the same door as
 * every subscription.
 */
export async function createAlerts(
  config: Config,
  deps: {
    admission: Admission;
    estimate: Estimator;
    logger: Logger;
    events?: DeliveryEvents;
    /** The process's link to the shared Redis (`REDIS_URL`), if any. */
    link?: RedisLink;
    /** The service's URL: alerts in Redis are kept under its name, as every shared thing is. */
    upstream: string;
    /** One of `WORKERS` processes sharing the SQLite file: each alert runs in one of them. */
    clusterWorker?: boolean;
  },
): Promise<AlertsPart> {
  const seal = createSeal(config.cursorSecret);
  const { link, logger } = deps;
  const prefix = link ? `${sharedPrefix(deps.upstream)}alerts:` : '';
  const store = link
    ? new RedisAlertStore(link, seal, prefix)
    : new SqliteAlertStore(join(config.alertsDataDir, 'alerts.sqlite'), seal);
  if (store instanceof SqliteAlertStore && store.binding === 'node-sqlite3-wasm') {
    logger.info(
      'alerts: SQLite through its WebAssembly build (node-sqlite3-wasm), as neither better-sqlite3 nor node:sqlite loads on this Node: a rollback journal, one holder of the file at a time',
    );
  }
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
  const attempt = (delivery: Delivery) =>
    attemptDelivery(delivery, { store, sender, rules, logger, events: deps.events });
  const leaseMs = config.alertDeliveryTimeoutMs + 5_000;
  let queue: DeliveryQueue;
  if (link) {
    // Loaded only with Redis: BullMQ and its client stay out of a gateway without it.
    const { RedisDeliveryQueue } = await import('./redis-delivery-queue.js');
    queue = new RedisDeliveryQueue({
      url: link.url,
      prefix: `${prefix}queue`,
      store: store as RedisAlertStore,
      attempt,
      concurrency: SENDERS,
      lockMs: leaseMs,
      onError: (message) => logger.warn(message),
    });
  } else {
    queue = new DeliveryLoop({
      queue: store as SqliteAlertStore,
      attempt,
      concurrency: SENDERS,
      leaseMs,
      onError: (error) =>
        logger.warn(`alerts: an attempt failed to be booked (${(error as Error).message})`),
    });
  }
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
    },
    redelivered: (delivery) => queue.added(delivery),
  });
  const instance = randomUUID();
  const runner = new AlertRunner({
    store,
    admission: deps.admission,
    app: () => app,
    callerOf: (alert) => alerts.callerOf(alert),
    added: (delivery) => queue.added(delivery),
    logger,
    ...(link
      ? {
          claim: (alert: Alert) =>
            link
              .run((redis) =>
                redis.eval(CLAIM, 1, `${prefix}run:${alert.id}`, instance, RUN_LEASE_MS),
              )
              .then((held) => held === 1)
              .catch(() => undefined),
        }
      : deps.clusterWorker
        ? {
            claim: async (alert: Alert) =>
              (store as SqliteAlertStore).claimRun(alert.id, instance, RUN_LEASE_MS),
          }
        : {}),
  });
  return {
    alerts,
    start(composed) {
      app = composed;
      runner.start();
      queue.start();
    },
    depth: () => queue.depth(),
    async close() {
      await runner.close();
      await queue.close();
      await sender.close();
      await store.close();
    },
  };
}
