import { creditCostExtension } from '../estimate/credit-cost.js';
import { fundingEventNode } from '../nodes/funding-event-node.js';
import { investorNode } from '../nodes/investor-node.js';
import { builder } from './builder.js';
import { compact } from './field-helpers.js';
import { filterArgs } from './filter-args.js';
import { upstreamList } from './upstream-list.js';
import { CONNECTION_COST } from '../estimate/credit-cost.js';
import { SourceRef } from './refs.js';
import { nodeConnection, nodeIdentity, nodeRef } from './node-refs.js';
import { companyNode } from '../nodes/company-node.js';

/**
 * The investors the estimate counts per round, as `@listSize(assumedSize:)` does: the service
 * bounds nothing. The sandbox's 50,000 rounds name 2.3 on average (median 2, three rounds in four
 * at most 3, none more than 6; `scripts/measure-assumed-sizes.ts`): 3, above the mean, so that a
 * list of rounds is not counted short. A round with more is served all the same, within the
 * operation's budget.
 */
export const ROUND_INVESTORS_ASSUMED = 3;

builder.node(nodeRef(fundingEventNode), {
  description: 'A funding round (GET /v1/funding-events).',
  ...nodeIdentity(fundingEventNode),
  fields: (t) => ({
    uuid: t.exposeID('id', { nullable: false, description: "The service's own UUID." }),
    company: t.expose('company', { type: nodeRef(companyNode), nullable: true }),
    round: t.exposeString('round', { description: 'Funding round, e.g. `series_a`; open-ended.' }),
    amountUsdCents: t.expose('amountUsdCents', {
      type: 'SafeInt',
      nullable: true,
      description: 'Amount in US cents (exceeds 32 bits for rounds above $21.4M).',
    }),
    amountUsd: t.exposeFloat('amountUsd', { description: 'Amount in US dollars.' }),
    amountOriginalCurrency: t.exposeString('amountOriginalCurrency'),
    amountOriginalCents: t.expose('amountOriginalCents', {
      type: 'SafeInt',
      nullable: true,
      description: 'Amount in the minor units of the original currency.',
    }),
    investors: t.field({
      type: [nodeRef(investorNode)],
      nullable: true,
      description:
        "The round's investors. `id`, `uuid` and `name` come with the event; any other field loads each distinct investor once per operation (one request each, made concurrently; usually one credit each).",
      resolve: (event) => compact(event.investors) ?? null,
      extensions: creditCostExtension({
        kind: 'references',
        assumedSize: ROUND_INVESTORS_ASSUMED,
        free: ['id', 'uuid', 'name'],
        load: investorNode.findCost({ uuid: '', name: 'any' }),
      }),
    }),
    announcedAt: t.expose('announcedAt', { type: 'DateTime', nullable: true }),
    discoveredAt: t.expose('discoveredAt', { type: 'DateTime', nullable: true }),
    sources: t.field({
      type: [SourceRef],
      nullable: true,
      resolve: (event) => compact(event.sources),
    }),
  }),
});

builder.queryField('fundingEvents', (t) =>
  t.connection(
    {
      type: nodeRef(fundingEventNode),
      description: 'Funding rounds (GET /v1/funding-events), newest discovery first.',
      args: filterArgs(t.arg, 'fundingEvents'),
      resolve: upstreamList('fundingEvents'),
      extensions: CONNECTION_COST,
    },
    nodeConnection(fundingEventNode),
  ),
);
