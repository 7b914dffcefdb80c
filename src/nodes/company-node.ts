import type { UpstreamSession } from '../upstream/upstream-session.js';
import type { CompanyRecord } from '../upstream/types.js';
import { FIRST_RECORD_ONLY, findInList, withId } from './find-in-list.js';
import {
  FIRST_RECORD_COST,
  LIST_RANK_ASSUMED,
  rankedLookupCost,
  type LookupCost,
} from './lookup-cost.js';
import { text } from './entity-keys.js';
import { NodeType } from './node-type.js';

/** The lists a company without a domain is looked for in, each read for one record. */
const EVENT_LISTS = 3;

/**
 * A company by a bare UUID, from its newest funding event, else executive move, else acquisition:
 * each list is filtered by the company, so the first record of the first list that has one holds
 * it, and an empty list charges nothing (one credit); three at most.
 */
const BY_EVENTS: LookupCost = { assumedCost: 1, worstCost: EVENT_LISTS };

/**
 * A company: by its domain (one credit), or, with no domain in its id, as embedded in its newest
 * funding event, executive move or acquisition (one credit: the lists before the one naming it
 * are empty, and charge nothing).
 */
export const companyNode = new NodeType<CompanyRecord, 'domain'>({
  typename: 'Company',
  listedBy: 'companies',
  hints: { domain: (company) => company.domain },
  async find(session, { uuid, domain }) {
    const match = withId<CompanyRecord>(uuid);
    if (domain) return findInList(session, 'companies', { domain }, match);
    return (
      (await findInList(
        session,
        'fundingEvents',
        { companyId: uuid },
        (e) => match(e.company),
        FIRST_RECORD_ONLY,
      )) ??
      (await findInList(
        session,
        'execMoves',
        { companyId: uuid },
        (m) => match(m.company) ?? match(m.fromCompany),
        FIRST_RECORD_ONLY,
      )) ??
      (await findInList(
        session,
        'acquisitions',
        { companyId: uuid },
        (a) => match(a.acquirer) ?? match(a.target),
        FIRST_RECORD_ONLY,
      ))
    );
  },
  findCost: ({ domain }) => (domain ? rankedLookupCost(LIST_RANK_ASSUMED) : BY_EVENTS),
  entityKeys: {
    others: ['uuid', 'domain'],
    lookup(representation, byId) {
      const uuid = text(representation['uuid']);
      if (uuid) return byId({ uuid });
      const domain = text(representation['domain']);
      if (!domain) return null;
      return {
        cost: COMPANY_BY_DOMAIN_COST,
        find: (_records, session) => findCompanyByDomain(session, domain),
      };
    },
  },
});

/** What {@link findCompanyByDomain} costs: the service's filter is exact, one record. */
export const COMPANY_BY_DOMAIN_COST = FIRST_RECORD_COST;

/**
 * A company by its domain (one credit); null when none has it. The service's `domain` filter is
 * exact (and, in the sandbox, case-blind), so the first record is the one.
 */
export function findCompanyByDomain(session: UpstreamSession, domain: string) {
  return findInList(session, 'companies', { domain }, (c) => c, FIRST_RECORD_ONLY);
}
