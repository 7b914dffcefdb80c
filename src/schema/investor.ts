import type { Context } from '../context.js';
import { keyedLookupCost } from '../estimate/lookup-costs.js';
import {
  findInvestorByDomain,
  INVESTOR_BY_DOMAIN_COST,
  investorNode,
} from '../nodes/investor-node.js';
import type { InvestorRecord } from '../upstream/types.js';
import { builder } from './builder.js';
import { exactlyOne } from './field-helpers.js';
import { filterArgs } from './filter-args.js';
import { upstreamList } from './upstream-list.js';
import { CONNECTION_COST } from '../estimate/credit-cost.js';
import { CountryRef, InvestorConnection, InvestorRefType, type InvestorStub } from './refs.js';

/**
 * The full record behind an investor. A funding event names its investors by `{ id, name }`
 * only; the first field asked beyond those loads the record, once per investor per operation.
 */
function full(investor: InvestorRecord | InvestorStub, context: Context) {
  return 'stub' in investor
    ? context.records.load(investorNode, { uuid: investor.id, name: investor.name ?? undefined })
    : investor;
}

/** The resolver of a field that may need the full record. */
function fromRecord<K extends keyof InvestorRecord>(key: K) {
  return async (
    investor: InvestorRecord | InvestorStub,
    _args: object,
    context: Context,
  ): Promise<InvestorRecord[K] | null> => (await full(investor, context))?.[key] ?? null;
}

builder.node(InvestorRefType, {
  name: 'Investor',
  description:
    'An investor from the directory. Under `FundingEvent.investors`, `id`, `uuid` and `name` are free; any other field loads the investor (one request and usually one credit per distinct investor).',
  id: { resolve: (investor) => investorNode.localId(investor) },
  loadWithoutCache: (id, { records }) => records.load(investorNode, investorNode.parseLocalId(id)),
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
      type: InvestorRefType,
      description: "The investor directory (GET /v1/investors), in the service's order.",
      args: filterArgs(t.arg, 'investors'),
      resolve: upstreamList('investors'),
      extensions: CONNECTION_COST,
    },
    InvestorConnection,
  ),
  investor: t.field({
    type: InvestorRefType,
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
      const [argument, value] = exactlyOne(args, ['id', 'uuid', 'domain']);
      if (argument === 'domain') return findInvestorByDomain(upstream, value);
      return records.load(
        investorNode,
        investorNode.idFromArgument(value, argument, config.cursorSecret),
      );
    },
  }),
}));
