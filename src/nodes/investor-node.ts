import type { UpstreamSession } from '../upstream/upstream-session.js';
import type { InvestorRecord, InvestorRef } from '../upstream/types.js';
import { FIRST_RECORD_ONLY, findInList, lookupCost, withId } from './find-in-list.js';
import { NodeType } from './node-type.js';

/** Pages of an investor's name search: they double, so records paid stay within twice the rank. */
export const INVESTOR_SEARCH_LIMITS = [1, 2, 4, 8, 16, 32, 64] as const;

/**
 * An investor, by a search for its name. Costs one credit per investor the search returns up to
 * and including this one: one when the name is distinctive, more when other investors share its
 * words (the search also matches domains). Gives up after 127 records. Without a name (a bare
 * UUID) there is nothing to search by: null, for nothing.
 */
export const investorNode = new NodeType<InvestorRecord, 'name', InvestorRef>({
  typename: 'Investor',
  hints: { name: (investor) => investor.name },
  async find(session, { uuid, name }) {
    if (!name) return null;
    return findInList(
      session,
      'investors',
      { search: name },
      withId<InvestorRecord>(uuid),
      INVESTOR_SEARCH_LIMITS,
    );
  },
  findCost: ({ name }) => (name ? lookupCost(INVESTOR_SEARCH_LIMITS) : 0),
});

/** What {@link findInvestorByDomain} can cost: the service's filter is exact, one record. */
export const INVESTOR_BY_DOMAIN_COST = lookupCost(FIRST_RECORD_ONLY);

/** An investor by its exact domain (one credit); null when none has it. */
export function findInvestorByDomain(session: UpstreamSession, domain: string) {
  return findInList(session, 'investors', { domain }, (i) => i, FIRST_RECORD_ONLY);
}
