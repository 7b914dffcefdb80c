import type { GraphQLError } from 'graphql';
import { ErrorCode, gatewayError } from '../errors.js';

/** The bounds of {@link SubscriptionCounts}, from the settings. */
export interface SubscriptionBounds {
  /** Open subscriptions of one principal on this instance (`MAX_SUBSCRIPTIONS_PER_PRINCIPAL`). */
  perPrincipal: number;
  /** Open subscriptions on one WebSocket (`MAX_SUBSCRIPTIONS_PER_CONNECTION`). */
  perConnection: number;
}

/** A WebSocket's own count of open subscriptions: made per connection by its door. */
export interface ConnectionCount {
  open: number;
}

/**
 * Open subscriptions per principal (an API key, a token's workspace and subject) and per
 * WebSocket connection, each bounded: one more past a bound is refused with
 * TOO_MANY_SUBSCRIPTIONS before it starts anything (no poller, no upstream request). Counted on
 * this instance (each instance bounds its own).
 */
export class SubscriptionCounts {
  readonly #bounds: SubscriptionBounds;
  readonly #byPrincipal = new Map<string, number>();

  constructor(bounds: SubscriptionBounds) {
    this.#bounds = bounds;
  }

  /**
   * Counts a subscription of `principal` (on `connection`, over a WebSocket) about to start: how
   * to uncount it once it ends (call once), or its refusal.
   */
  open(principal: string, connection?: ConnectionCount): (() => void) | GraphQLError {
    const { perPrincipal, perConnection } = this.#bounds;
    const held = this.#byPrincipal.get(principal) ?? 0;
    if (connection && connection.open >= perConnection) {
      return refusal('connection', perConnection, 'MAX_SUBSCRIPTIONS_PER_CONNECTION');
    }
    if (held >= perPrincipal) {
      return refusal('principal', perPrincipal, 'MAX_SUBSCRIPTIONS_PER_PRINCIPAL');
    }
    this.#byPrincipal.set(principal, held + 1);
    if (connection) connection.open += 1;
    let closed = false;
    return () => {
      if (closed) return;
      closed = true;
      if (connection) connection.open -= 1;
      const left = (this.#byPrincipal.get(principal) ?? 1) - 1;
      if (left > 0) this.#byPrincipal.set(principal, left);
      else this.#byPrincipal.delete(principal);
    };
  }

  /** Open subscriptions of `principal` (for tests and metrics). */
  of(principal: string): number {
    return this.#byPrincipal.get(principal) ?? 0;
  }
}

function refusal(scope: 'principal' | 'connection', limit: number, setting: string): GraphQLError {
  const whose = scope === 'principal' ? 'Your credentials have' : 'This connection has';
  return gatewayError(
    ErrorCode.TOO_MANY_SUBSCRIPTIONS,
    `${whose} ${limit} subscriptions open, the most allowed (${setting}): nothing was started. End one first, or share one subscription among the views that need the same filters.`,
    { scope, limit },
  );
}
