import type { Plugin } from 'graphql-yoga';

/** The request headers that select whose answer this is, or what it may spend. */
const CALLER_HEADERS = ['X-API-Key', 'Authorization', 'X-Credit-Budget', 'X-Credit-Estimate'];

/** `vary` with each of `names` it lacks added (case-blind), for whatever set it before. */
function withVary(vary: string | null, names: readonly string[]): string {
  const present = new Set(
    (vary ?? '')
      .split(',')
      .map((name) => name.trim().toLowerCase())
      .filter(Boolean),
  );
  const added = names.filter((name) => !present.has(name.toLowerCase()));
  return [vary, ...added].filter(Boolean).join(', ');
}

/**
 * Every answer is its caller's own: the workspace's records and its credit balance. So every
 * response says `Cache-Control: private, no-store` (no shared cache or CDN in front keeps it,
 * even a GET of a persisted query, which `useGETForHashedQueries` makes look cacheable) and
 * `Vary` on the headers that select the caller. Repeat views are made cheap by the gateway's own
 * page cache, which is keyed by the caller.
 */
export function usePrivateAnswers(): Plugin {
  return {
    onResponse({ response }) {
      response.headers.set('cache-control', 'private, no-store');
      response.headers.set('vary', withVary(response.headers.get('vary'), CALLER_HEADERS));
    },
  };
}
