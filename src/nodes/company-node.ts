import type { UpstreamSession } from '../upstream/upstream-session.js';
import type { CompanyRecord } from '../upstream/types.js';
import { findInList, withId } from './find-in-list.js';
import { NodeType } from './node-type.js';

/**
 * A company: by its domain (one credit), or, with no domain in its id, as embedded in its newest
 * funding event, executive move or acquisition (one credit per endpoint tried, at most three).
 */
export const companyNode = new NodeType<CompanyRecord, 'domain'>({
  typename: 'Company',
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
        [1],
      )) ??
      (await findInList(
        session,
        'execMoves',
        { companyId: uuid },
        (m) => match(m.company) ?? match(m.fromCompany),
        [1],
      )) ??
      (await findInList(
        session,
        'acquisitions',
        { companyId: uuid },
        (a) => match(a.acquirer) ?? match(a.target),
        [1],
      ))
    );
  },
});

/** A company by its exact domain (one credit); null when none has it. */
export function findCompanyByDomain(session: UpstreamSession, domain: string) {
  return findInList(session, 'companies', { domain }, (c) => (c.domain === domain ? c : null));
}
