import type {
  AcquisitionRecord,
  CompanyRecord,
  ExecMoveRecord,
  FundingEventRecord,
  InvestorRecord,
} from './types.js';

/** How a query parameter is written: one value, or the key repeated once per value. */
export type ParamKind = 'string' | 'number' | 'boolean' | 'list';

/** The five list endpoints (spec section 4): path, and the filters each takes besides paging. */
export const endpoints = {
  execMoves: {
    path: '/v1/exec-moves',
    filters: {
      companyId: 'string',
      personId: 'string',
      roleSeniority: 'list',
      moveType: 'list',
      since: 'string',
      until: 'string',
    },
  },
  acquisitions: {
    path: '/v1/acquisitions',
    filters: {
      paymentType: 'list',
      minAmountUsd: 'number',
      maxAmountUsd: 'number',
      isMerger: 'boolean',
      companyId: 'string',
      since: 'string',
    },
  },
  fundingEvents: {
    path: '/v1/funding-events',
    filters: {
      round: 'list',
      minAmountUsd: 'number',
      maxAmountUsd: 'number',
      country: 'string',
      industryGroup: 'string',
      companyId: 'string',
      since: 'string',
    },
  },
  companies: {
    path: '/v1/companies',
    filters: {
      search: 'string',
      domain: 'string',
      country: 'string',
      industryGroup: 'string',
      employeeCountBucket: 'string',
      foundedYearMin: 'number',
      foundedYearMax: 'number',
      since: 'string',
    },
  },
  investors: {
    path: '/v1/investors',
    filters: {
      search: 'string',
      type: 'list',
      country: 'string',
      domain: 'string',
      since: 'string',
    },
  },
} as const satisfies Record<string, { path: string; filters: Record<string, ParamKind> }>;

export type EndpointName = keyof typeof endpoints;

/** The record type each endpoint returns in `data`. */
export interface EndpointRecords {
  execMoves: ExecMoveRecord;
  acquisitions: AcquisitionRecord;
  fundingEvents: FundingEventRecord;
  companies: CompanyRecord;
  investors: InvestorRecord;
}

type KindValue<K extends ParamKind> = K extends 'list'
  ? readonly string[]
  : K extends 'number'
    ? number
    : K extends 'boolean'
      ? boolean
      : string;

type FiltersOf<E extends EndpointName> = (typeof endpoints)[E]['filters'];

/** The filters of endpoint `E`, typed; absent, null and empty lists are all "no filter". */
export type EndpointFilters<E extends EndpointName> = {
  [P in keyof FiltersOf<E>]?:
    (FiltersOf<E>[P] extends ParamKind ? KindValue<FiltersOf<E>[P]> : never) | null;
};
