/** The newest deliveries kept per alert (pending ones are always kept): the log's bound. */
export const DELIVERIES_KEPT = 1_000;

/** Whether an alert runs. */
export type AlertStatus =
  /** Its subscription runs; its deliveries are sent. */
  | 'active'
  /** Paused by its owner: nothing runs; it resumes from where it stopped. */
  | 'paused'
  /** Disabled by the gateway (410 Gone, too many failures, a key the service refuses): see `reason`. */
  | 'disabled';

/** What runs an alert on its owner's behalf, sealed at rest (`seal.ts`): never logged. */
export interface AlertCaller {
  /** The key the alert's polls and lookups send (`AUTH_MODE=api-key`: the owner's own). */
  upstreamKey: string | null;
  /** With `AUTH_MODE=jwt`: the owner's workspace, whose key is looked up at each run. */
  workspace: string | null;
  /** The owner's principal (its quota's bucket). */
  principal: string | null;
  /** The owner's own quota (`JWT_QUOTA_CLAIM`), as `CREDIT_QUOTA` writes it, if any. */
  quota: string | null;
}

/** One alert, as kept. */
export interface Alert {
  id: string;
  /** Who may see and change it: a hash of its owner's principal. */
  owner: string;
  caller: AlertCaller;
  /** The subscription document (one field: `fundingEventAdded`, `execMoveAdded`, `acquisitionAdded`). */
  query: string;
  operationName: string | null;
  variables: Record<string, unknown>;
  url: string;
  /** The signing secret, `whsec_…`. */
  secret: string;
  /** Credits it may spend per day (UTC). */
  dailyBudget: number;
  status: AlertStatus;
  /** Why it is disabled, or what it waits for. */
  reason: string | null;
  /** While its budget or quota is spent: when it runs again (ms since the epoch). */
  waitingUntil: number | null;
  /** The `discoveredAt` of the last record delivered to its queue: it resumes after it. */
  watermark: string | null;
  /** The day (`YYYY-MM-DD`, UTC) `spent` counts, and what it spent that day. */
  spentDay: string;
  spent: number;
  /** Failed deliveries in a row (given up, or attempts): disabled past the setting. */
  failures: number;
  createdAt: number;
}

/** Where a delivery stands. */
export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** One record's delivery to one alert. */
export interface Delivery {
  /** `webhook-id`: the same on every attempt, made from the alert and the record. */
  id: string;
  alertId: string;
  recordId: string;
  /** The JSON sent, as a subscriber receives the payload (`data` and `extensions`). */
  body: string;
  status: DeliveryStatus;
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  nextAttemptAt: number | null;
  deliveredAt: number | null;
  createdAt: number;
  /** When the service discovered the record (ms since the epoch), for the delivery's latency. */
  discoveredAt: number | null;
}

/** A page's cursor (`after`): the created time and id of an item, newest first. */
export function pageCursor(item: { createdAt: number; id: string }): string {
  return Buffer.from(`${item.createdAt}\n${item.id}`).toString('base64url');
}

/** A page of a list, newest first, and where the next one starts. */
export interface Page<T> {
  items: T[];
  /** The key to pass as `after` for the next page; null at the end. */
  next: string | null;
}

/**
 * Where alerts and their deliveries are kept: an embedded SQLite file by default
 * (`sqlite-alert-store.ts`), Redis with `REDIS_URL`. Writes are durable when they return: an
 * alert created, a watermark moved, a delivery added or acknowledged survives a crash.
 */
export interface AlertStore {
  create(alert: Alert): Promise<void>;
  /** The alert `id` if `owner` owns it; undefined otherwise (another's is not found). */
  get(owner: string, id: string): Promise<Alert | undefined>;
  /** Every alert of `owner`, newest first. */
  list(owner: string, first: number, after: string | null): Promise<Page<Alert>>;
  count(owner: string): Promise<number>;
  /** The alerts a runner may run: active ones, and those waiting whose time has come. */
  runnable(now: number): Promise<Alert[]>;
  update(id: string, change: Partial<Omit<Alert, 'id' | 'owner'>>): Promise<void>;
  delete(owner: string, id: string): Promise<boolean>;

  /**
   * Adds `delivery` (pending, due now) and moves its alert's watermark and spending, at once:
   * false when a delivery of that id is there already (the record was delivered to the queue).
   */
  addDelivery(delivery: Delivery, watermark: string | null, spent: number): Promise<boolean>;
  getDelivery(id: string): Promise<Delivery | undefined>;
  deliveries(alertId: string, first: number, after: string | null): Promise<Page<Delivery>>;
  updateDelivery(id: string, change: Partial<Omit<Delivery, 'id' | 'alertId'>>): Promise<void>;
  close(): Promise<void>;
}
