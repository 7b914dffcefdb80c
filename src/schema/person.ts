import { formatLocalId, localIdFromArgument, parseLocalId } from '../global-id.js';
import type { PersonRecord } from '../upstream/types.js';
import { builder } from './builder.js';
import { upstreamList } from './upstream-list.js';
import { exactlyOne } from './field-helpers.js';
import { companyIdArg, execMoveFilterArgs } from './filter-args.js';
import { ExecMoveConnection, ExecMoveRef, PersonRef } from './refs.js';

builder.node(PersonRef, {
  description:
    'A person, as executive moves name them. The service has no person directory: a person is found through their moves.',
  id: { resolve: (person) => formatLocalId(person.id) },
  loadWithoutCache: (id, context) => context.loaders.person.load(parseLocalId(id)),
  fields: (t) => ({
    uuid: t.exposeID('id', { nullable: false, description: "The service's own UUID." }),
    name: t.exposeString('name'),
    linkedinHandle: t.exposeString('linkedinHandle'),
    linkedinUrl: t.exposeString('linkedinUrl'),
    execMoves: t.connection(
      {
        type: ExecMoveRef,
        description: "This person's executive moves, newest discovery first.",
        args: {
          ...execMoveFilterArgs(t.arg),
          companyId: companyIdArg(t.arg, 'Only moves at this company.'),
        },
        resolve: upstreamList('execMoves', (person: PersonRecord) => ({ personId: person.id })),
      },
      ExecMoveConnection,
    ),
  }),
});

builder.queryField('person', (t) =>
  t.field({
    type: PersonRef,
    nullable: true,
    description:
      'One person by `id` or `uuid`; null when the service has no move of theirs. Costs one credit (the person is read from one of their moves).',
    args: {
      id: t.arg.id({ description: 'The Person `id` (global id).' }),
      uuid: t.arg.id({ description: "The service's UUID." }),
    },
    resolve: (_root, args, { loaders }) => {
      const [argument, value] = exactlyOne(args, ['id', 'uuid']);
      return loaders.person.load(localIdFromArgument(value, 'Person', argument));
    },
  }),
);
