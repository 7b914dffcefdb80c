import { acquisitionNode } from '../nodes/acquisition-node.js';
import { builder } from './builder.js';
import { compact } from './field-helpers.js';
import { filterArgs } from './filter-args.js';
import { upstreamList } from './upstream-list.js';
import { CONNECTION_COST } from '../estimate/credit-cost.js';
import { SourceRef } from './refs.js';
import { nodeConnection, nodeIdentity, nodeRef } from './node-refs.js';
import { companyNode } from '../nodes/company-node.js';

builder.node(nodeRef(acquisitionNode), {
  description: 'An acquisition or merger (GET /v1/acquisitions).',
  ...nodeIdentity(acquisitionNode),
  fields: (t) => ({
    uuid: t.exposeID('id', { nullable: false, description: "The service's own UUID." }),
    acquirer: t.expose('acquirer', { type: nodeRef(companyNode), nullable: true }),
    target: t.expose('target', { type: nodeRef(companyNode), nullable: true }),
    dealAmountUsdCents: t.expose('dealAmountUsdCents', {
      type: 'SafeInt',
      nullable: true,
      description: 'Deal amount in US cents (exceeds 32 bits for deals above $21.4M).',
    }),
    dealAmountUsd: t.exposeFloat('dealAmountUsd', { description: 'Deal amount in US dollars.' }),
    dealAmountOriginalCurrency: t.exposeString('dealAmountOriginalCurrency'),
    dealAmountOriginalCents: t.expose('dealAmountOriginalCents', {
      type: 'SafeInt',
      nullable: true,
      description: 'Deal amount in the minor units of the original currency.',
    }),
    paymentType: t.exposeString('paymentType', { description: 'e.g. `cash`; open-ended.' }),
    isMerger: t.exposeBoolean('isMerger', {
      description: 'true for mergers, false for other acquisitions.',
    }),
    announcedAt: t.expose('announcedAt', { type: 'DateTime', nullable: true }),
    closingAt: t.expose('closingAt', { type: 'DateTime', nullable: true }),
    discoveredAt: t.expose('discoveredAt', { type: 'DateTime', nullable: true }),
    sources: t.field({
      type: [SourceRef],
      nullable: true,
      resolve: (deal) => compact(deal.sources),
    }),
  }),
});

builder.queryField('acquisitions', (t) =>
  t.connection(
    {
      type: nodeRef(acquisitionNode),
      description: 'Acquisitions and mergers (GET /v1/acquisitions), newest discovery first.',
      args: filterArgs(t.arg, 'acquisitions'),
      resolve: upstreamList('acquisitions'),
      extensions: CONNECTION_COST,
    },
    nodeConnection(acquisitionNode),
  ),
);
