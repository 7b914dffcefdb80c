import type { Config } from './config.js';
import { createLoaders, primeLoaders, type Loaders } from './loaders.js';
import type { UpstreamClient } from './upstream/create-upstream-client.js';
import { UpstreamSession } from './upstream/upstream-session.js';

/** What every resolver gets: this operation's upstream session, loaders and settings. */
export interface Context {
  config: Config;
  upstream: UpstreamSession;
  loaders: Loaders;
}

/** The caller's key from `X-API-Key`, or else `Authorization: Bearer <key>`; null if neither. */
export function apiKeyFrom(headers: Headers): string | null {
  const key = headers.get('x-api-key')?.trim();
  if (key) return key;
  const match = /^Bearer\s+(.+)$/i.exec(headers.get('authorization') ?? '');
  return match?.[1]?.trim() || null;
}

/** Builds the context of one operation; the key lives here and nowhere else. */
export function createContext(
  config: Config,
  client: UpstreamClient,
  apiKey: string | null,
): Context {
  const loaders: Loaders = createLoaders(() => upstream);
  const upstream = new UpstreamSession(
    client,
    apiKey,
    config.upstreamConcurrency,
    (endpoint, records) => primeLoaders(loaders, endpoint, records),
  );
  return { config, upstream, loaders };
}
