import { UPSTREAM_MAX_LIMIT } from '../upstream/build-query.js';

/**
 * What finding one record costs in credits, declared with the lookup (a node type's `findCost`, a
 * lookup by domain). The estimate counts `assumedCost`; the operation's budget, not this, stops
 * a lookup that costs more.
 */
export interface LookupCost {
  /**
   * The credits of the usual case: exact where the service's filter names the record (a domain,
   * a person's moves), else the pages that reach the record at an assumed rank in its list.
   */
  readonly assumedCost: number;
  /**
   * The most the lookup can cost; null where the service bounds nothing (the lookup pages until
   * it finds the record or the list ends).
   */
  readonly worstCost: number | null;
}

/** A lookup that sends nothing (an id without the hints to search by). */
export const NO_LOOKUP: LookupCost = { assumedCost: 0, worstCost: 0 };

/** A lookup of one page of one record, whose filter names the record exactly: one credit. */
export const FIRST_RECORD_COST: LookupCost = { assumedCost: 1, worstCost: 1 };

/**
 * The page sizes of a lookup that pages until it finds its record: one record first (the usual
 * case costs one request and one credit), then doubling, so that the credits paid stay within
 * twice the record's rank, up to the service's largest page, then that page size on and on.
 */
export function* growingPages(): Generator<number, never> {
  for (let limit = 1; ; limit = Math.min(limit * 2, UPSTREAM_MAX_LIMIT)) yield limit;
}

/** The credits a lookup paging by {@link growingPages} pays to reach the record at `rank` (1-based). */
export function lookupCredits(rank: number): number {
  const pages = growingPages();
  let credits = 0;
  while (credits < rank) credits += pages.next().value;
  return credits;
}

/** The cost of a lookup by {@link growingPages} whose record sits at `assumedRank` in its list. */
export function rankedLookupCost(assumedRank: number): LookupCost {
  return { assumedCost: lookupCredits(assumedRank), worstCost: null };
}

/**
 * The rank the estimate assumes a record has in a lookup list narrowed to it (one credit): an
 * event's among its company's or person's events since its discovery, a company's among those
 * with its domain. The service bounds nothing, but such a list starts with the record: measured
 * on the sandbox (`scripts/measure-assumed-sizes.ts`), the median rank is 1 for each, the mean 1.2
 * for funding events, 1.0 for executive moves and companies, 1.7 for acquisitions (a company's
 * newer deals come first).
 */
export const LIST_RANK_ASSUMED = 1;

/**
 * The upstream requests a lookup is expected to send: the pages of {@link growingPages} that reach
 * its assumed credits, and one at least, since a lookup that finds nothing still asks (for no
 * credit); none for one that sends nothing ({@link NO_LOOKUP}).
 */
export function lookupRequests(cost: LookupCost): number {
  if (cost.worstCost === 0) return 0;
  const pages = growingPages();
  let requests = 1;
  for (let credits = pages.next().value; credits < cost.assumedCost; requests++) {
    credits += pages.next().value;
  }
  return requests;
}
