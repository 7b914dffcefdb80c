import type { PersonRecord } from '../upstream/types.js';
import { FIRST_RECORD_ONLY, findInList, withId } from './find-in-list.js';
import { FIRST_RECORD_COST } from './lookup-cost.js';
import { text } from './entity-keys.js';
import { NodeType } from './node-type.js';

/** A person: the service has no person directory, so one is read from their moves (one credit). */
export const personNode = new NodeType<PersonRecord, never>({
  typename: 'Person',
  hints: {},
  // Every move the `personId` filter returns is theirs: the first one is enough.
  find: (session, { uuid }) =>
    findInList(
      session,
      'execMoves',
      { personId: uuid },
      (move) => withId<PersonRecord>(uuid)(move.person),
      FIRST_RECORD_ONLY,
    ),
  findCost: () => FIRST_RECORD_COST,
  entityKeys: {
    others: ['uuid'],
    lookup(representation, byId) {
      const uuid = text(representation['uuid']);
      return uuid ? byId({ uuid }) : null;
    },
  },
});
