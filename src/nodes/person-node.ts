import type { PersonRecord } from '../upstream/types.js';
import { findInList, withId } from './find-in-list.js';
import { NodeType } from './node-type.js';

/** A person: the service has no person directory, so one is read from their moves (one credit). */
export const personNode = new NodeType<PersonRecord, never>({
  typename: 'Person',
  hints: {},
  find: (session, { uuid }) =>
    findInList(session, 'execMoves', { personId: uuid }, (move) =>
      withId<PersonRecord>(uuid)(move.person),
    ),
});
