import type { Context } from '../context.js';
import { keyedLookupCost } from '../estimate/lookup-costs.js';
import {
  findInvestorByDomain,
  INVESTOR_BY_DOMAIN_COST,
  investorNode,
} from '../nodes/investor-node.js';
import type { InvestorRecord, InvestorRef } from '../upstream/types.js';
import { builder } from './builder.js';
import { exactlyOne, LOOKUP_KEYS } from './field-helpers.js';
import { filterArgs } from './filter-args.js';
import { upstreamList } from './upstream-list.js';
import { CONNECTION_COST } from '../estimate/credit-cost.js';
import { CountryRef } from './refs.js';
import { nodeConnection, nodeIdentity, nodeRef } from './node-refs.js';

/**
 * The full record behind an investor. A funding event names its investors by `{ id, name }`
 * only; the first field asked beyond those loads the record, once per investor per operation.
 */
function full(investor: InvestorRef, context: Context) {
  // A record some page listed as an investor is full; `{ id, name }` under a round is not.
  return context.records.typenameOf(investor) === investorNode.typename
    ? (investor as InvestorRecord)
    : context.records.load(investorNode, { uuid: investor.id, name: investor.name ?? undefined });
}

/** The resolver of a field that may need the full record. */
function fromRecord<K extends keyof InvestorRecord>(key: K) {
  return async (
    investor: InvestorRef,
    _args: object,
    context: Context,
  ): Promise<InvestorRecord[K] | null> => (await full(investor, context))?.[key] ?? null;
}

builder.node(nodeRef(investorNode), {
  description:
    'An investor from the directory. Under `FundingEvent.investors`, `id`, `uuid` and `name` are free; any other field loads the investor (one request and usually one credit per distinct investor).',
  ...nodeIdentity(investorNode),
  fields: (t) => ({
    uuid: t.exposeID('id', { nullable: false, description: "The service's own UUID." }),
    name: t.exposeString('name'),
    type: t.string({
      description: 'Investor type, e.g. `vc`; open-ended.',
      resolve: fromRecord('type'),
    }),
    hqCountry: t.field({ type: CountryRef, resolve: fromRecord('hqCountry') }),
    domain: t.string({ resolve: fromRecord('domain') }),
    firstSeenAt: t.field({ type: 'DateTime', resolve: fromRecord('firstSeenAt') }),
    lastSeenAt: t.field({ type: 'DateTime', resolve: fromRecord('lastSeenAt') }),
    createdAt: t.field({ type: 'DateTime', resolve: fromRecord('createdAt') }),
    updatedAt: t.field({ type: 'DateTime', resolve: fromRecord('updatedAt') }),
  }),
});

builder.queryFields((t) => ({
  investors: t.connection(
    {
      type: nodeRef(investorNode),
      description: "The investor directory (GET /v1/investors), in the service's order.",
      args: filterArgs(t.arg, 'investors'),
      resolve: upstreamList('investors'),
      extensions: CONNECTION_COST,
    },
    nodeConnection(investorNode),
  ),
  investor: t.field({
    type: nodeRef(investorNode),
    nullable: true,
    description:
      'One investor by exactly one of `id`, `uuid` or `domain`; null when none matches. By `id` or `domain` it usually costs one credit; a bare `uuid` carries no hint to search by, so it finds nothing unless the investor was already seen in this operation.',
    args: {
      id: t.arg.id({ description: 'The Investor `id` (global id).' }),
      uuid: t.arg.id({ description: "The service's UUID." }),
      domain: t.arg.string({ description: 'The exact investor domain.' }),
    },
    extensions: keyedLookupCost(investorNode, INVESTOR_BY_DOMAIN_COST),
    resolve: (_root, args, { records, upstream, config }) => {
      const [argument, value] = exactlyOne(args, LOOKUP_KEYS);
      if (argument === 'domain') return findInvestorByDomain(upstream, value);
      return records.load(
        investorNode,
        investorNode.idFromArgument(value, argument, config.cursorSecret),
      );
    },
  }),
}));
