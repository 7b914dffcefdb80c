import type { Caller } from '../auth/create-authenticator.js';
import type { Alert, Delivery, Page } from './alert-store.js';

/** What a caller sends to make an alert. */
export interface AlertInput {
  /** The subscription document; or `documentId` under `TRUSTED_DOCUMENTS`. */
  subscription?: string | null;
  documentId?: string | null;
  operationName?: string | null;
  variables?: Record<string, unknown> | null;
  url: string;
  dailyBudget?: number | null;
}

/** An alert with its secret, shown once (at creation and rotation). */
export interface WithSecret {
  alert: Alert;
  secret: string;
}

/** The alert operations the graph offers a caller (`schema/alerts.ts`), over its own alerts. */
export interface AlertsApi {
  create(caller: Caller | undefined, input: AlertInput): Promise<WithSecret>;
  get(caller: Caller | undefined, id: string): Promise<Alert | undefined>;
  list(caller: Caller | undefined, first: number, after: string | null): Promise<Page<Alert>>;
  pause(caller: Caller | undefined, id: string): Promise<Alert>;
  resume(caller: Caller | undefined, id: string): Promise<Alert>;
  delete(caller: Caller | undefined, id: string): Promise<boolean>;
  rotate(caller: Caller | undefined, id: string): Promise<WithSecret>;
  redeliver(caller: Caller | undefined, deliveryId: string): Promise<Delivery>;
  deliveries(alertId: string, first: number, after: string | null): Promise<Page<Delivery>>;
}
