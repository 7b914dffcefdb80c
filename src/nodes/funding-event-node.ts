import type { FundingEventRecord } from '../upstream/types.js';
import { companyNode } from './company-node.js';
import { findInList, justBefore, withId } from './find-in-list.js';
import { LIST_RANK_ASSUMED, NO_LOOKUP, rankedLookupCost } from './lookup-cost.js';
import { text, uuidOf } from './entity-keys.js';
import { NodeType } from './node-type.js';

/** A funding event: among its company's rounds of the same round type since its discovery. */
export const fundingEventNode = new NodeType<
  FundingEventRecord,
  'companyId' | 'discoveredAt' | 'round'
>({
  typename: 'FundingEvent',
  listedBy: 'fundingEvents',
  hints: {
    companyId: (event) => event.company?.id,
    discoveredAt: (event) => event.discoveredAt,
    round: (event) => event.round,
  },
  async find(session, { uuid, companyId, discoveredAt, round }) {
    if (!companyId) return null;
    return findInList(
      session,
      'fundingEvents',
      { companyId, since: justBefore(discoveredAt), round: round ? [round] : undefined },
      withId<FundingEventRecord>(uuid),
    );
  },
  findCost: ({ companyId }) => (companyId ? rankedLookupCost(LIST_RANK_ASSUMED) : NO_LOOKUP),
  embeds(event, prime) {
    prime(companyNode, event.company);
  },
  entityKeys: {
    others: ['uuid company { uuid }'],
    lookup(representation, byId) {
      const uuid = text(representation['uuid']);
      const companyId = uuidOf(representation, 'company');
      return uuid && companyId ? byId({ uuid, companyId }) : null;
    },
  },
});
