import { buildFilterQuery } from '../upstream/build-query.js';
import type { EndpointFilters, EndpointName, EndpointRecords } from '../upstream/endpoints.js';
import { isRecord, type ListEnvelope } from '../upstream/types.js';
import type { UpstreamSession } from '../upstream/upstream-session.js';
import { growingPages } from './lookup-cost.js';

/** Page sizes of a lookup whose filter names the record exactly (a domain, a person's id). */
export const FIRST_RECORD_ONLY = [1] as const;

/**
 * Finds a record by narrowing a list with `filters` and paging until `pick` returns it: by
 * {@link growingPages} until the list ends (the operation's budget stops it first, rejecting with
 * CREDIT_BUDGET_EXHAUSTED), or by the `limits` given. Null when the list ends or the pages run out.
 * Null items are skipped.
 */
export async function findInList<E extends EndpointName, T>(
  session: UpstreamSession,
  endpoint: E,
  filters: EndpointFilters<E>,
  pick: (record: EndpointRecords[E]) => T | null | undefined,
  limits: Iterable<number> = growingPages(),
): Promise<T | null> {
  const filterQuery = buildFilterQuery(endpoint, filters);
  let cursor: string | null = null;
  for (const limit of limits) {
    const page: ListEnvelope<EndpointRecords[E]> = await session.page(endpoint, filterQuery, {
      cursor,
      limit,
    });
    const { data, pagination } = page;
    for (const record of data) {
      const found = isRecord(record) ? pick(record) : null;
      if (found) return found;
    }
    // An empty page ends the search too: nothing else would show that the next one moves on.
    if (data.length === 0 || !pagination.hasMore || !pagination.nextCursor) return null;
    cursor = pagination.nextCursor;
  }
  return null;
}

/** `pick` for {@link findInList}: the record itself when its id is `uuid`. */
export function withId<T extends { id: string }>(uuid: string) {
  return (record: T | null | undefined) => (record?.id === uuid ? record : null);
}

/** A millisecond before `timestamp`, for the service's strict `since`; undefined if unreadable. */
export function justBefore(timestamp: string | undefined) {
  const time = timestamp ? Date.parse(timestamp) : NaN;
  return Number.isNaN(time) ? undefined : new Date(time - 1).toISOString();
}

/** A millisecond after `timestamp`, for the service's strict `until`; undefined if unreadable. */
export function justAfter(timestamp: string | undefined) {
  const time = timestamp ? Date.parse(timestamp) : NaN;
  return Number.isNaN(time) ? undefined : new Date(time + 1).toISOString();
}
