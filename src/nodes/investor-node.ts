import type { UpstreamSession } from '../upstream/upstream-session.js';
import type { InvestorRecord, InvestorRef } from '../upstream/types.js';
import { FIRST_RECORD_ONLY, findInList, withId } from './find-in-list.js';
import { FIRST_RECORD_COST, NO_LOOKUP, rankedLookupCost } from './lookup-cost.js';
import { text } from './entity-keys.js';
import { NodeType } from './node-type.js';

/**
 * The rank the estimate assumes an investor has in a search for its own name: first, one credit.
 * The service bounds nothing: the search returns, in the directory's order, every investor whose
 * name or domain holds the name's words. Measured (`scripts/measure-assumed-sizes.ts`), an
 * investor is first for 90% of the test stack's 200 investors; on the sandbox's default 5,000,
 * names generated from a small vocabulary share words far more (first for 45%, median 2, mean
 * 3.4). On an independent implementation of the service, the investors of ten series-B rounds
 * cost 31 credits, about one each (issue 21). A shared name costs more, within the budget.
 */
export const INVESTOR_NAME_RANK_ASSUMED = 1;

/**
 * An investor, by a search for its name. Costs one credit per investor the search returns up to
 * and including this one (its pages double, 1, 2, 4, … then 100 at a time): one when the name is
 * distinctive, more when other investors share its words (the search also matches domains). It
 * pages until it finds the investor or the list ends, within the operation's budget. Without a
 * name (a bare UUID) there is nothing to search by: null, for nothing.
 */
export const investorNode = new NodeType<InvestorRecord, 'name', InvestorRef>({
  typename: 'Investor',
  listedBy: 'investors',
  hints: { name: (investor) => investor.name },
  async find(session, { uuid, name }) {
    if (!name) return null;
    return findInList(session, 'investors', { search: name }, withId<InvestorRecord>(uuid));
  },
  findCost: ({ name }) => (name ? rankedLookupCost(INVESTOR_NAME_RANK_ASSUMED) : NO_LOOKUP),
  entityKeys: {
    others: ['uuid name', 'domain'],
    lookup(representation, byId) {
      const uuid = text(representation['uuid']);
      const name = text(representation['name']);
      if (uuid && name) return byId({ uuid, name });
      const domain = text(representation['domain']);
      if (!domain) return null;
      return {
        cost: INVESTOR_BY_DOMAIN_COST,
        find: (_records, session) => findInvestorByDomain(session, domain),
      };
    },
  },
});

/** What {@link findInvestorByDomain} costs: the service's filter is exact, one record. */
export const INVESTOR_BY_DOMAIN_COST = FIRST_RECORD_COST;

/** An investor by its exact domain (one credit); null when none has it. */
export function findInvestorByDomain(session: UpstreamSession, domain: string) {
  return findInList(session, 'investors', { domain }, (i) => i, FIRST_RECORD_ONLY);
}
