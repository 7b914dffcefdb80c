import { filtersOf, type EndpointFilters, type EndpointName } from './endpoints.js';

/** The most records one upstream page holds: `limit` is 1..100 on every endpoint (spec 4.1, 8). */
export const UPSTREAM_MAX_LIMIT = 100;

/** Paging parameters common to the five endpoints (spec 4.1). */
export interface PageParams {
  cursor?: string | null;
  limit: number;
}

/**
 * The canonical query string of the filters alone: keys in the endpoint's table order, list
 * values sorted and repeated, every value percent-encoded so that none can add a parameter.
 * Equal filters give equal strings, which is what dedupe and cursor binding compare.
 */
export function buildFilterQuery<E extends EndpointName>(
  endpoint: E,
  filters: EndpointFilters<E>,
): string {
  const values = filters as Record<string, unknown>;
  const params = new URLSearchParams();
  for (const [key, { kind }] of filtersOf(endpoint)) {
    const value = values[key];
    if (value === undefined || value === null) continue;
    if (kind === 'list') {
      for (const item of [...(value as readonly string[])].sort()) params.append(key, item);
    } else {
      params.append(key, String(value));
    }
  }
  return params.toString();
}

/**
 * The full query string of one page request: filters, then `cursor` and `limit`. `filterQuery`
 * is {@link buildFilterQuery}'s, already encoded, so it is joined as it is rather than parsed
 * and written again; the cursor is encoded the same way (as `URLSearchParams` writes it).
 */
export function buildPageQuery(filterQuery: string, page: PageParams): string {
  const cursor = page.cursor
    ? `cursor=${new URLSearchParams({ c: page.cursor }).toString().slice(2)}&`
    : '';
  const paging = `${cursor}limit=${page.limit}`;
  return filterQuery ? `${filterQuery}&${paging}` : paging;
}
