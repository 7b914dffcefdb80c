import { execMoveNode } from '../nodes/exec-move-node.js';
import { builder } from './builder.js';
import { compact } from './field-helpers.js';
import { filterArgs } from './filter-args.js';
import { upstreamList } from './upstream-list.js';
import { CONNECTION_COST } from '../estimate/credit-cost.js';
import { SourceRef } from './refs.js';
import { nodeConnection, nodeIdentity, nodeRef } from './node-refs.js';
import { companyNode } from '../nodes/company-node.js';
import { personNode } from '../nodes/person-node.js';

builder.node(nodeRef(execMoveNode), {
  description: 'An executive job change (GET /v1/exec-moves).',
  ...nodeIdentity(execMoveNode),
  fields: (t) => ({
    uuid: t.exposeID('id', { nullable: false, description: "The service's own UUID." }),
    person: t.expose('person', { type: nodeRef(personNode), nullable: true }),
    company: t.expose('company', {
      type: nodeRef(companyNode),
      nullable: true,
      description: 'The company where the move takes place.',
    }),
    fromCompany: t.expose('fromCompany', {
      type: nodeRef(companyNode),
      nullable: true,
      description: 'The company the person comes from.',
    }),
    role: t.exposeString('role', { description: 'Job title.' }),
    roleSeniority: t.exposeString('roleSeniority', {
      description: 'Seniority class, e.g. `c_level`; open-ended.',
    }),
    moveType: t.exposeString('moveType', {
      description: 'Kind of move: appointment, promotion, departure, transition; open-ended.',
    }),
    announcedAt: t.expose('announcedAt', { type: 'DateTime', nullable: true }),
    effectiveDate: t.expose('effectiveDate', { type: 'DateTime', nullable: true }),
    discoveredAt: t.expose('discoveredAt', { type: 'DateTime', nullable: true }),
    sources: t.field({
      type: [SourceRef],
      nullable: true,
      resolve: (move) => compact(move.sources),
    }),
  }),
});

builder.queryField('execMoves', (t) =>
  t.connection(
    {
      type: nodeRef(execMoveNode),
      description: 'Executive moves (GET /v1/exec-moves), newest discovery first.',
      args: filterArgs(t.arg, 'execMoves'),
      resolve: upstreamList('execMoves'),
      extensions: CONNECTION_COST,
    },
    nodeConnection(execMoveNode),
  ),
);
