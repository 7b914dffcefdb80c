/** The request headers that select whose answer this is, or what it may spend. */
const CALLER_HEADERS = ['X-API-Key', 'Authorization', 'X-Credit-Budget', 'X-Credit-Estimate'];

/** The `Vary` of an answer that had none (most): made once. */
const CALLER_VARY = CALLER_HEADERS.join(', ');

/** Every answer's `Cache-Control`: see {@link varyByCaller}. */
export const PRIVATE_CACHE_CONTROL = 'private, no-store';

/**
 * The `Vary` of an answer whose `Vary` was `vary`: each caller header it lacks added (case-blind).
 * Every answer is its caller's own (the workspace's records and its credit balance), so every
 * response says `Cache-Control: private, no-store` (no shared cache or CDN in front keeps it, even
 * a GET of a persisted query) and `Vary` on the headers that select the caller. Repeat views are
 * made cheap by the gateway's own page cache and kept answers, which are keyed by the caller.
 */
export function varyByCaller(vary: string | null | undefined): string {
  if (!vary) return CALLER_VARY;
  const present = new Set(
    vary
      .split(',')
      .map((name) => name.trim().toLowerCase())
      .filter(Boolean),
  );
  const added = CALLER_HEADERS.filter((name) => !present.has(name.toLowerCase()));
  return [vary, ...added].filter(Boolean).join(', ');
}
