import type { AcquisitionRecord } from '../upstream/types.js';
import { companyNode } from './company-node.js';
import { findInList, justBefore, withId } from './find-in-list.js';
import { LIST_RANK_ASSUMED, NO_LOOKUP, rankedLookupCost } from './lookup-cost.js';
import { text, uuidOf } from './entity-keys.js';
import { NodeType } from './node-type.js';

/** An acquisition: among its acquirer's (or, without one, its target's) deals since discovery. */
export const acquisitionNode = new NodeType<AcquisitionRecord, 'companyId' | 'discoveredAt'>({
  typename: 'Acquisition',
  listedBy: 'acquisitions',
  hints: {
    companyId: (deal) => deal.acquirer?.id ?? deal.target?.id,
    discoveredAt: (deal) => deal.discoveredAt,
  },
  async find(session, { uuid, companyId, discoveredAt }) {
    if (!companyId) return null;
    return findInList(
      session,
      'acquisitions',
      { companyId, since: justBefore(discoveredAt) },
      withId<AcquisitionRecord>(uuid),
    );
  },
  findCost: ({ companyId }) => (companyId ? rankedLookupCost(LIST_RANK_ASSUMED) : NO_LOOKUP),
  embeds(deal, prime) {
    prime(companyNode, deal.acquirer);
    prime(companyNode, deal.target);
  },
  entityKeys: {
    others: ['uuid acquirer { uuid }', 'uuid target { uuid }'],
    lookup(representation, byId) {
      const uuid = text(representation['uuid']);
      // The service's `companyId` filter matches the acquirer or the target.
      const companyId = uuidOf(representation, 'acquirer') ?? uuidOf(representation, 'target');
      return uuid && companyId ? byId({ uuid, companyId }) : null;
    },
  },
});
