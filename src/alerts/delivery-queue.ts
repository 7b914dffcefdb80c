import type { Delivery } from './alert-store.js';

/**
 * What sends the pending deliveries, each by one sender at a time: the embedded loop over the
 * SQLite file (`DeliveryLoop`), or BullMQ's queue shared by every instance through Redis
 * (`RedisDeliveryQueue`).
 */
export interface DeliveryQueue {
  start(): void;
  /** A delivery was written pending (new, or sent again): it is sent when it is due. */
  added(delivery: Pick<Delivery, 'id' | 'nextAttemptAt'>): void;
  /** Deliveries pending, as last known (the metric's gauge). */
  depth(): number;
  /** Stops taking deliveries; resolves once the attempts in flight are done. */
  close(): Promise<void>;
}
