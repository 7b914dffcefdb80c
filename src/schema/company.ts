import { formatLocalId, localIdFromArgument, parseLocalId } from '../global-id.js';
import { findCompanyByDomain } from '../lookups.js';
import type { CompanyRecord } from '../upstream/types.js';
import { builder } from './builder.js';
import { upstreamList } from './upstream-list.js';
import {
  acquisitionFilterArgs,
  companyFilterArgs,
  execMoveFilterArgs,
  fundingEventFilterArgs,
  personIdArg,
} from './filter-args.js';
import {
  AcquisitionConnection,
  AcquisitionRef,
  CompanyConnection,
  CompanyRef,
  CountryRef,
  ExecMoveConnection,
  ExecMoveRef,
  FundingEventConnection,
  FundingEventRef,
} from './refs.js';
import { compact, exactlyOne } from './field-helpers.js';

builder.node(CompanyRef, {
  description: 'A company from the directory, also embedded in every event about it.',
  id: { resolve: (company) => formatLocalId(company.id, company.domain) },
  loadWithoutCache: (id, context) => context.loaders.company.load(parseLocalId(id)),
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
        type: FundingEventRef,
        description: "This company's funding rounds, newest discovery first.",
        args: fundingEventFilterArgs(t.arg),
        resolve: upstreamList('fundingEvents', (company: CompanyRecord) => ({
          companyId: company.id,
        })),
      },
      FundingEventConnection,
    ),
    acquisitions: t.connection(
      {
        type: AcquisitionRef,
        description: 'Acquisitions and mergers where this company is the acquirer or the target.',
        args: acquisitionFilterArgs(t.arg),
        resolve: upstreamList('acquisitions', (company: CompanyRecord) => ({
          companyId: company.id,
        })),
      },
      AcquisitionConnection,
    ),
    execMoves: t.connection(
      {
        type: ExecMoveRef,
        description: 'Executive moves at this company, newest discovery first.',
        args: { ...execMoveFilterArgs(t.arg), personId: personIdArg(t.arg) },
        resolve: upstreamList('execMoves', (company: CompanyRecord) => ({
          companyId: company.id,
        })),
      },
      ExecMoveConnection,
    ),
  }),
});

builder.queryFields((t) => ({
  companies: t.connection(
    {
      type: CompanyRef,
      description: "The company directory (GET /v1/companies), in the service's order.",
      args: companyFilterArgs(t.arg),
      resolve: upstreamList('companies'),
    },
    CompanyConnection,
  ),
  company: t.field({
    type: CompanyRef,
    nullable: true,
    description:
      'One company by exactly one of `id`, `uuid` or `domain`; null when none matches. A lookup by `domain` or by an `id` costs one credit; by a bare `uuid`, up to three (the service has no fetch-by-id, so the company is read from its newest event).',
    args: {
      id: t.arg.id({ description: 'The Company `id` (global id).' }),
      uuid: t.arg.id({ description: "The service's UUID." }),
      domain: t.arg.string({ description: 'The exact company domain.' }),
    },
    resolve: (_root, args, { loaders, upstream }) => {
      const [argument, value] = exactlyOne(args, ['id', 'uuid', 'domain']);
      if (argument === 'domain') return findCompanyByDomain(upstream, value);
      return loaders.company.load(localIdFromArgument(value, 'Company', argument));
    },
  }),
}));
