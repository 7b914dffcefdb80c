import { keyedLookupCost } from '../estimate/lookup-costs.js';
import { personNode } from '../nodes/person-node.js';
import type { PersonRecord } from '../upstream/types.js';
import { builder } from './builder.js';
import { exactlyOne } from './field-helpers.js';
import { filterArgs } from './filter-args.js';
import { upstreamList } from './upstream-list.js';
import { CONNECTION_COST } from '../estimate/credit-cost.js';

/** The filter a person's moves take from them. */
const ofPerson = { personId: (person: PersonRecord) => person.id };
import { nodeConnection, nodeIdentity, nodeRef } from './node-refs.js';
import { execMoveNode } from '../nodes/exec-move-node.js';

builder.node(nodeRef(personNode), {
  description:
    'A person, as executive moves name them. The service has no person directory: a person is found through their moves.',
  ...nodeIdentity(personNode),
  fields: (t) => ({
    uuid: t.exposeID('id', { nullable: false, description: "The service's own UUID." }),
    name: t.exposeString('name'),
    linkedinHandle: t.exposeString('linkedinHandle'),
    linkedinUrl: t.exposeString('linkedinUrl'),
    execMoves: t.connection(
      {
        type: nodeRef(execMoveNode),
        description: "This person's executive moves, newest discovery first.",
        args: filterArgs(t.arg, 'execMoves', ofPerson),
        resolve: upstreamList('execMoves', ofPerson),
        extensions: CONNECTION_COST,
      },
      nodeConnection(execMoveNode),
    ),
  }),
});

builder.queryField('person', (t) =>
  t.field({
    type: nodeRef(personNode),
    nullable: true,
    description:
      'One person by `id` or `uuid`; null when the service has no move of theirs. Costs one credit (the person is read from one of their moves).',
    args: {
      id: t.arg.id({ description: 'The Person `id` (global id).' }),
      uuid: t.arg.id({ description: "The service's UUID." }),
    },
    extensions: keyedLookupCost(personNode),
    resolve: (_root, args, { records, config }) => {
      const [argument, value] = exactlyOne(args, ['id', 'uuid']);
      return records.load(
        personNode,
        personNode.idFromArgument(value, argument, config.cursorSecret),
      );
    },
  }),
);
