import { buildFilterQuery } from '../upstream/build-query.js';
import type { EndpointFilters, EndpointName, EndpointRecords } from '../upstream/endpoints.js';
import { isRecord, type ListEnvelope } from '../upstream/types.js';
import type { UpstreamSession } from '../upstream/upstream-session.js';

/** Page sizes of a lookup: the usual case costs one request and one credit. */
export const LOOKUP_PAGE_LIMITS = [1, 5, 20] as const;

/** Page sizes of a lookup whose filter names the record exactly (a domain, a person's id). */
export const FIRST_RECORD_ONLY = [1] as const;

/** The most credits {@link findInList} can spend with these page sizes: every page, full. */
export function lookupCost(limits: readonly number[] = LOOKUP_PAGE_LIMITS): number {
  let credits = 0;
  for (const limit of limits) credits += limit;
  return credits;
}

/**
 * Finds a record by narrowing a list with `filters` and paging (with growing page sizes) until
 * `pick` returns it; null when the list ends or the pages run out. Null items are skipped.
 */
export async function findInList<E extends EndpointName, T>(
  session: UpstreamSession,
  endpoint: E,
  filters: EndpointFilters<E>,
  pick: (record: EndpointRecords[E]) => T | null | undefined,
  limits: readonly number[] = LOOKUP_PAGE_LIMITS,
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
    if (!pagination.hasMore || !pagination.nextCursor) return null;
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
