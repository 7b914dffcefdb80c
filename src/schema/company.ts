import { keyedLookupCost } from '../estimate/lookup-costs.js';
import { COMPANY_BY_DOMAIN_COST, companyNode, findCompanyByDomain } from '../nodes/company-node.js';
import type { CompanyRecord } from '../upstream/types.js';
import { builder } from './builder.js';
import { filterArgs } from './filter-args.js';
import { upstreamList } from './upstream-list.js';
import { CONNECTION_COST } from '../estimate/credit-cost.js';
import { CountryRef } from './refs.js';
import { nodeConnection, nodeIdentity, nodeRef } from './node-refs.js';
import { acquisitionNode } from '../nodes/acquisition-node.js';
import { execMoveNode } from '../nodes/exec-move-node.js';
import { fundingEventNode } from '../nodes/funding-event-node.js';
import { compact, exactlyOne, LOOKUP_KEYS } from './field-helpers.js';

/** The filter a company's own lists take from it. */
const ofCompany = { companyId: (company: CompanyRecord) => company.id };

builder.node(nodeRef(companyNode), {
  description: 'A company from the directory, also embedded in every event about it.',
  ...nodeIdentity(companyNode),
  fields: (t) => ({
    uuid: t.exposeID('id', { nullable: false, description: "The service's own UUID." }),
    name: t.exposeString('name'),
    domain: t.exposeString('domain'),
    description: t.exposeString('description'),
    linkedinHandle: t.exposeString('linkedinHandle'),
    linkedinUrl: t.exposeString('linkedinUrl'),
    linkedinGeoId: t.exposeString('linkedinGeoId'),
    linkedinIndustryId: t.exposeString('linkedinIndustryId'),
    hqCity: t.exposeString('hqCity'),
    hqCountry: t.expose('hqCountry', { type: CountryRef, nullable: true }),
    industryGroup: t.exposeString('industryGroup'),
    industrySubTags: t.stringList({ resolve: (company) => compact(company.industrySubTags) }),
    employeeCountBucket: t.exposeString('employeeCountBucket', {
      description: 'A range label of the form `<min>-<max>`, e.g. `51-200`.',
    }),
    foundedYear: t.exposeInt('foundedYear'),
    businessModel: t.exposeString('businessModel'),
    createdAt: t.expose('createdAt', { type: 'DateTime', nullable: true }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime', nullable: true }),
    fundingEvents: t.connection(
      {
        type: nodeRef(fundingEventNode),
        description: "This company's funding rounds, newest discovery first.",
        args: filterArgs(t.arg, 'fundingEvents', ofCompany),
        resolve: upstreamList('fundingEvents', ofCompany),
        extensions: CONNECTION_COST,
      },
      nodeConnection(fundingEventNode),
    ),
    acquisitions: t.connection(
      {
        type: nodeRef(acquisitionNode),
        description: 'Acquisitions and mergers where this company is the acquirer or the target.',
        args: filterArgs(t.arg, 'acquisitions', ofCompany),
        resolve: upstreamList('acquisitions', ofCompany),
        extensions: CONNECTION_COST,
      },
      nodeConnection(acquisitionNode),
    ),
    execMoves: t.connection(
      {
        type: nodeRef(execMoveNode),
        description: 'Executive moves at this company, newest discovery first.',
        args: filterArgs(t.arg, 'execMoves', ofCompany),
        resolve: upstreamList('execMoves', ofCompany),
        extensions: CONNECTION_COST,
      },
      nodeConnection(execMoveNode),
    ),
  }),
});

builder.queryFields((t) => ({
  companies: t.connection(
    {
      type: nodeRef(companyNode),
      description: "The company directory (GET /v1/companies), in the service's order.",
      args: filterArgs(t.arg, 'companies'),
      resolve: upstreamList('companies'),
      extensions: CONNECTION_COST,
    },
    nodeConnection(companyNode),
  ),
  company: t.field({
    type: nodeRef(companyNode),
    nullable: true,
    description:
      'One company by exactly one of `id`, `uuid` or `domain`; null when none matches. A lookup by `domain` or by an `id` costs one credit; by a bare `uuid`, up to three (the service has no fetch-by-id, so the company is read from its newest event).',
    args: {
      id: t.arg.id({ description: 'The Company `id` (global id).' }),
      uuid: t.arg.id({ description: "The service's UUID." }),
      domain: t.arg.string({ description: 'The exact company domain.' }),
    },
    extensions: keyedLookupCost(companyNode, COMPANY_BY_DOMAIN_COST),
    resolve: (_root, args, { records, upstream, config }) => {
      const [argument, value] = exactlyOne(args, LOOKUP_KEYS);
      if (argument === 'domain') return findCompanyByDomain(upstream, value);
      return records.load(
        companyNode,
        companyNode.idFromArgument(value, argument, config.cursorSecret),
      );
    },
  }),
}));
