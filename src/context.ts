import type { GraphQLError } from 'graphql';
import type { Config } from './config.js';
import { RecordStore } from './nodes/record-store.js';
import type { UpstreamCall } from './upstream/upstream-call.js';
import { UpstreamSession } from './upstream/upstream-session.js';

/** What every resolver gets: this operation's upstream session, records and settings. */
export interface Context {
  config: Config;
  /** The caller's upstream session: key, dedupe, concurrency cap, ledger. */
  upstream: UpstreamSession;
  /** The records seen in this operation, and lookups by id. */
  records: RecordStore;
  /**
   * Errors of fields that still returned data: a connection whose later upstream page failed
   * keeps the records already paid for. Added to the response's `errors` after execution.
   */
  fieldErrors: GraphQLError[];
}

/** The caller's key from `X-API-Key`, or else `Authorization: Bearer <key>`; null if neither. */
export function apiKeyFrom(headers: Headers): string | null {
  const key = headers.get('x-api-key')?.trim();
  if (key) return key;
  const match = /^Bearer\s+(.+)$/i.exec(headers.get('authorization') ?? '');
  return match?.[1]?.trim() || null;
}

/**
 * Builds the context of one operation; the key lives here and nowhere else. `signal` (the HTTP
 * request's) aborts its upstream requests when the client goes away.
 */
export function createContext(
  config: Config,
  call: UpstreamCall,
  apiKey: string | null,
  signal?: AbortSignal,
): Context {
  const upstream = new UpstreamSession({
    call,
    apiKey,
    concurrency: config.upstreamConcurrency,
    signal,
  });
  return { config, upstream, records: new RecordStore(upstream), fieldErrors: [] };
}
