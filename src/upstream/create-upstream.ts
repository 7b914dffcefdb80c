import { budgetPolicy } from './policies/budget.js';
import { createTransport, type TransportOptions } from './transport.js';
import type { UpstreamCall, UpstreamPolicy } from './upstream-call.js';

/** Options of {@link createUpstream}. */
export type UpstreamOptions = TransportOptions;

/**
 * The one way the gateway reaches the Business-Signals service, shared by all operations: the
 * transport wrapped in its policies. Per-caller state (the key, the ledger) comes with each call.
 */
export interface Upstream {
  call: UpstreamCall;
  /** Closes the connections to the service. */
  close(): Promise<void>;
}

/** Wraps `call` in `policies`, the first innermost: `wrap(t, a, b)` is `b(a(t))`. */
export function wrap(call: UpstreamCall, ...policies: UpstreamPolicy[]): UpstreamCall {
  return policies.reduce((inner, policy) => policy(inner), call);
}

/**
 * Builds the upstream pipeline. Every upstream request passes here, from the transport outward:
 *
 *   transport → (breaker → retry → cache → coalescing, as they arrive) → budget
 *
 * Each policy is a file of its own in `policies/` with the {@link UpstreamPolicy} signature.
 */
export function createUpstream(options: UpstreamOptions): Upstream {
  const transport = createTransport(options);
  return {
    call: wrap(transport.call, budgetPolicy),
    close: () => transport.close(),
  };
}
