import type { ExecMoveRecord } from '../upstream/types.js';
import { companyNode } from './company-node.js';
import { findInList, justAfter, justBefore, withId } from './find-in-list.js';
import { LIST_RANK_ASSUMED, NO_LOOKUP, rankedLookupCost } from './lookup-cost.js';
import { text, uuidOf } from './entity-keys.js';
import { NodeType } from './node-type.js';
import { personNode } from './person-node.js';

/** An executive move: among its person's moves discovered or announced around its discovery. */
export const execMoveNode = new NodeType<ExecMoveRecord, 'personId' | 'discoveredAt'>({
  typename: 'ExecMove',
  listedBy: 'execMoves',
  hints: {
    personId: (move) => move.person?.id,
    discoveredAt: (move) => move.discoveredAt,
  },
  async find(session, { uuid, personId, discoveredAt }) {
    if (!personId) return null;
    return findInList(
      session,
      'execMoves',
      { personId, since: justBefore(discoveredAt), until: justAfter(discoveredAt) },
      withId<ExecMoveRecord>(uuid),
    );
  },
  findCost: ({ personId }) => (personId ? rankedLookupCost(LIST_RANK_ASSUMED) : NO_LOOKUP),
  embeds(move, prime) {
    prime(personNode, move.person);
    prime(companyNode, move.company);
    prime(companyNode, move.fromCompany);
  },
  entityKeys: {
    others: ['uuid person { uuid }'],
    lookup(representation, byId) {
      const uuid = text(representation['uuid']);
      const personId = uuidOf(representation, 'person');
      return uuid && personId ? byId({ uuid, personId }) : null;
    },
  },
});
