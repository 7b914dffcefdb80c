import type { UpstreamSession } from '../upstream/upstream-session.js';
import type { CompanyRecord } from '../upstream/types.js';
import {
  FIRST_RECORD_ONLY,
  findInList,
  LOOKUP_PAGE_LIMITS,
  lookupCost,
  withId,
} from './find-in-list.js';
import { NodeType } from './node-type.js';

/** The lists a company without a domain is looked for in, each read for one record. */
const EVENT_LISTS = 3;

/**
 * A company: by its domain (one credit), or, with no domain in its id, as embedded in its newest
 * funding event, executive move or acquisition (one credit per endpoint tried, at most three).
 */
export const companyNode = new NodeType<CompanyRecord, 'domain'>({
  typename: 'Company',
  hints: { domain: (company) => company.domain },
  async find(session, { uuid, domain }) {
    const match = withId<CompanyRecord>(uuid);
    if (domain) return findInList(session, 'companies', { domain }, match, LOOKUP_PAGE_LIMITS);
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
  findCost: ({ domain }) =>
    domain ? lookupCost(LOOKUP_PAGE_LIMITS) : EVENT_LISTS * lookupCost(FIRST_RECORD_ONLY),
});

/** What {@link findCompanyByDomain} can cost: the service's filter is exact, one record. */
export const COMPANY_BY_DOMAIN_COST = lookupCost(FIRST_RECORD_ONLY);

/**
 * A company by its domain (one credit); null when none has it. The service's `domain` filter is
 * exact (and, in the sandbox, case-blind), so the first record is the one.
 */
export function findCompanyByDomain(session: UpstreamSession, domain: string) {
  return findInList(session, 'companies', { domain }, (c) => c, FIRST_RECORD_ONLY);
}
