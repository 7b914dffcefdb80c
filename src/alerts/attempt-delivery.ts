import type { Logger } from '../logging/create-logger.js';
import type { Alert, AlertStore, Delivery } from './alert-store.js';
import type { WebhookSender } from './send-webhook.js';

/** The delivery rules, from the settings. */
export interface DeliveryRules {
  /** How long a delivery is tried before it is given up (`ALERT_RETRY_SECONDS`). */
  retryForMs: number;
  /** The first retry's delay; each next one doubles it, jittered (`ALERT_RETRY_BASE_MS`). */
  retryBaseMs: number;
  /** The longest delay between two attempts. */
  retryMaxMs: number;
  /** Deliveries given up in a row that disable the alert (`ALERT_DISABLE_AFTER`). */
  disableAfter: number;
}

/** What was decided of a delivery after one attempt. */
export type AttemptResult =
  | { outcome: 'delivered' }
  /** Tried again at `at` (ms since the epoch). */
  | { outcome: 'retry'; at: number }
  /** Given up: out of time, its alert disabled (410, too many failures) or gone. */
  | { outcome: 'failed' }
  /** Not sent now: its alert is paused; looked at again at `at`. */
  | { outcome: 'held'; at: number };

/** Events of the attempts, for the metrics. */
export interface DeliveryEvents {
  attempted?(outcome: 'delivered' | 'retry' | 'failed', ms: number): void;
  /** From the record's discovery to its delivery. */
  delivered?(latencyMs: number): void;
}

/** The delay before attempt `attempts + 1`: exponential, jittered (½ to 1½ of it), bounded. */
export function retryDelay(attempts: number, rules: DeliveryRules): number {
  const base = Math.min(rules.retryBaseMs * 2 ** Math.max(0, attempts - 1), rules.retryMaxMs);
  return Math.round(base * (0.5 + Math.random()));
}

/**
 * One attempt at `delivery` (whoever schedules it: the embedded loop, or the Redis queue's
 * worker), and what follows from it, written to the store: a 2xx acknowledges it and resets its
 * alert's failures; a 410 Gone disables the alert; any other failure is retried with backoff
 * until `retryForMs` has passed since the delivery was made, then given up, and the alert is
 * disabled after `disableAfter` deliveries given up in a row. A paused alert holds its
 * deliveries; a deleted one drops them. One log line per attempt: the alert and delivery ids,
 * the attempt, its status and outcome, never the URL (it may hold a token) or the secret.
 */
export async function attemptDelivery(
  delivery: Delivery,
  deps: {
    store: AlertStore & { byId(id: string): Promise<Alert | undefined> };
    sender: WebhookSender;
    rules: DeliveryRules;
    logger: Logger;
    events?: DeliveryEvents;
  },
): Promise<AttemptResult> {
  const { store, sender, rules, logger, events } = deps;
  const alert = await store.byId(delivery.alertId);
  const now = Date.now();
  if (!alert || alert.status === 'disabled') {
    await store.updateDelivery(delivery.id, {
      status: 'failed',
      lastError: alert ? `its alert is disabled: ${alert.reason ?? ''}` : 'its alert was deleted',
      nextAttemptAt: null,
    });
    return { outcome: 'failed' };
  }
  if (alert.status === 'paused') {
    const at = now + 5_000;
    await store.updateDelivery(delivery.id, { nextAttemptAt: at });
    return { outcome: 'held', at };
  }
  const started = performance.now();
  const sent = await sender.send({
    id: delivery.id,
    url: alert.url,
    secret: alert.secret,
    body: delivery.body,
  });
  const ms = performance.now() - started;
  const attempts = delivery.attempts + 1;
  let result: AttemptResult;
  if (sent.ok) {
    await store.updateDelivery(delivery.id, {
      status: 'delivered',
      attempts,
      lastStatus: sent.status,
      lastError: null,
      nextAttemptAt: null,
      deliveredAt: Date.now(),
    });
    if (alert.failures > 0) await store.update(alert.id, { failures: 0 });
    if (delivery.discoveredAt !== null) events?.delivered?.(Date.now() - delivery.discoveredAt);
    result = { outcome: 'delivered' };
  } else if (sent.gone || now - delivery.createdAt >= rules.retryForMs || sent.refused) {
    await store.updateDelivery(delivery.id, {
      status: 'failed',
      attempts,
      lastStatus: sent.status || null,
      lastError: sent.reason,
      nextAttemptAt: null,
    });
    const failures = alert.failures + 1;
    if (sent.gone) {
      await store.update(alert.id, {
        status: 'disabled',
        reason:
          'its receiver answered 410 Gone: the alert is disabled (resume it to deliver again)',
        failures,
      });
    } else if (failures >= rules.disableAfter) {
      await store.update(alert.id, {
        status: 'disabled',
        reason: `${failures} deliveries in a row were given up (the last: ${sent.reason})`,
        failures,
      });
    } else {
      await store.update(alert.id, { failures });
    }
    result = { outcome: 'failed' };
  } else {
    const at = now + retryDelay(attempts, rules);
    await store.updateDelivery(delivery.id, {
      attempts,
      lastStatus: sent.status || null,
      lastError: sent.reason,
      nextAttemptAt: at,
    });
    result = { outcome: 'retry', at };
  }
  events?.attempted?.(result.outcome as 'delivered' | 'retry' | 'failed', ms);
  logger.info(
    {
      alert: alert.id,
      delivery: delivery.id,
      attempt: attempts,
      status: sent.status || null,
      outcome: result.outcome,
      reason: sent.ok ? undefined : sent.reason,
      ms: Math.round(ms * 10) / 10,
    },
    'alert delivery',
  );
  return result;
}
