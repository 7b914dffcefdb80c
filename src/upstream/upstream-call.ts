import type { CreditLedger } from './credit-ledger.js';
import type { EndpointName } from './endpoints.js';
import type { ListEnvelope, UpstreamRecord } from './types.js';

/** One page request, as every policy and the transport see it. */
export interface UpstreamRequest {
  readonly endpoint: EndpointName;
  /** The canonical query string (filters in table order, then `cursor` and `limit`). */
  readonly query: string;
  /** The caller's key: forwarded as `X-API-Key`, never logged, never part of a shared key. */
  readonly apiKey: string;
  /** Where the requests sent and the credits charged for this call are booked. */
  readonly ledger: CreditLedger;
  /** Aborts the call (the client went away, or the operation's deadline passed). */
  readonly signal?: AbortSignal;
}

/**
 * Fetches one page: resolves with the success envelope, rejects with an `UpstreamError`. The
 * transport is one; every policy is another that wraps it, with the same signature.
 */
export type UpstreamCall = (request: UpstreamRequest) => Promise<ListEnvelope<UpstreamRecord>>;

/** A policy (breaker, retry, cache, coalescing, budget...) wraps the call it is given. */
export type UpstreamPolicy = (next: UpstreamCall) => UpstreamCall;
