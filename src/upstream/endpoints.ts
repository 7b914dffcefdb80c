import type {
  AcquisitionRecord,
  CompanyRecord,
  ExecMoveRecord,
  FundingEventRecord,
  InvestorRecord,
} from './types.js';

/** How a query parameter is written: one value, or the key repeated once per value. */
export type ParamKind = 'string' | 'number' | 'boolean' | 'list';

/**
 * One filter of one endpoint, declared once: how it is written upstream, the GraphQL argument
 * that carries it, and the rule a value must keep. The schema's arguments, their validation
 * (before any request) and the query string are all made from this.
 */
export interface FilterDef {
  /** How the query parameter is written. */
  readonly kind: ParamKind;
  /** The GraphQL type of the argument of the same name. */
  readonly type: 'String' | 'ID' | 'DateTime' | 'Float' | 'Int' | 'Boolean' | '[String]';
  /** The argument's description; the rule is appended to it. */
  readonly description: string;
  /** Numbers: the least value allowed (spec section 8). */
  readonly min?: number;
  /** Strings and list items: at most this many characters, and never blank. */
  readonly maxLength?: number;
  /** Lists: at most this many values, so a request's URL stays within what the service reads. */
  readonly maxItems?: number;
  /** Ids: the node type whose global id (or bare UUID) the argument takes. */
  readonly ref?: 'Company' | 'Person';
}

/** Free text (search words, codes, labels): non-blank and at most this long. */
const TEXT_MAX_LENGTH = 200;
/** Repeated-key lists: values each, and their length. */
const LIST_MAX_ITEMS = 20;
const LIST_ITEM_MAX_LENGTH = 100;

const text = (description: string) =>
  ({ kind: 'string', type: 'String', description, maxLength: TEXT_MAX_LENGTH }) as const;
const anyOf = (description: string) =>
  ({
    kind: 'list',
    type: '[String]',
    description,
    maxItems: LIST_MAX_ITEMS,
    maxLength: LIST_ITEM_MAX_LENGTH,
  }) as const;
const atLeastZero = (type: 'Float' | 'Int', description: string) =>
  ({ kind: 'number', type, description, min: 0 }) as const;
const time = (description: string) => ({ kind: 'string', type: 'DateTime', description }) as const;
const flag = (description: string) => ({ kind: 'boolean', type: 'Boolean', description }) as const;
const idOf = (ref: 'Company' | 'Person', description: string) =>
  ({ kind: 'string', type: 'ID', description, ref }) as const;

/**
 * The five list endpoints (spec section 4): path, and the filters each takes besides paging, in
 * the order they are written in a query string.
 */
export const endpoints = {
  execMoves: {
    path: '/v1/exec-moves',
    filters: {
      companyId: idOf('Company', 'Only moves at this company.'),
      personId: idOf('Person', 'Only moves of this person.'),
      roleSeniority: anyOf('Seniority classes, any of (e.g. `c_level`); open-ended values.'),
      moveType: anyOf('Kinds of move, any of (appointment, promotion, departure, transition).'),
      since: time('Only moves discovered or announced after this time.'),
      until: time('Only moves discovered or announced before this time.'),
    },
  },
  acquisitions: {
    path: '/v1/acquisitions',
    filters: {
      paymentType: anyOf('Payment types, any of (e.g. `cash`).'),
      minAmountUsd: atLeastZero('Float', 'Minimum deal amount in US dollars.'),
      maxAmountUsd: atLeastZero('Float', 'Maximum deal amount in US dollars.'),
      isMerger: flag('true: only mergers; false: only other acquisitions.'),
      companyId: idOf('Company', 'Only deals where this company is the acquirer or the target.'),
      since: time('Only deals discovered or announced after this time.'),
    },
  },
  fundingEvents: {
    path: '/v1/funding-events',
    filters: {
      round: anyOf('Funding rounds, any of (e.g. `series_a`).'),
      minAmountUsd: atLeastZero('Float', 'Minimum funding amount in US dollars.'),
      maxAmountUsd: atLeastZero('Float', 'Maximum funding amount in US dollars.'),
      country: text("Company headquarters' country code."),
      industryGroup: text('Company industry group.'),
      companyId: idOf('Company', 'Only rounds of this (entity-resolved) company.'),
      since: time('Only rounds discovered or announced after this time.'),
    },
  },
  companies: {
    path: '/v1/companies',
    filters: {
      search: text('Keyword search over name, domain and description.'),
      domain: text('Exact company domain.'),
      country: text('Headquarters country code.'),
      industryGroup: text('Industry group.'),
      employeeCountBucket: text('Employee count bucket label, e.g. `51-200`.'),
      foundedYearMin: atLeastZero('Int', 'Minimum founded year (inclusive).'),
      foundedYearMax: atLeastZero('Int', 'Maximum founded year (inclusive).'),
      since: time('Only companies created or updated after this time.'),
    },
  },
  investors: {
    path: '/v1/investors',
    filters: {
      search: text('Keyword search over name and domain.'),
      type: anyOf('Investor types, any of (e.g. `vc`).'),
      country: text('Headquarters country code.'),
      domain: text('Exact investor domain.'),
      since: time('Only investors created or updated after this time.'),
    },
  },
} as const satisfies Record<string, { path: string; filters: Record<string, FilterDef> }>;

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

/** The filter names of endpoint `E`. */
export type FilterName<E extends EndpointName> = keyof FiltersOf<E> & string;

/** The filters of endpoint `E`, typed; absent, null and empty lists are all "no filter". */
export type EndpointFilters<E extends EndpointName> = {
  [P in keyof FiltersOf<E>]?:
    (FiltersOf<E>[P] extends { kind: infer K extends ParamKind } ? KindValue<K> : never) | null;
};

const filterLists = Object.fromEntries(
  Object.entries(endpoints).map(([name, { filters }]) => [name, Object.entries(filters)]),
) as unknown as Record<EndpointName, readonly (readonly [string, FilterDef])[]>;

/** The filters of `endpoint` as `[name, definition]` pairs, in table order. */
export function filtersOf(endpoint: EndpointName): readonly (readonly [string, FilterDef])[] {
  return filterLists[endpoint];
}

/** The rule of a filter in words, as argument descriptions and INVALID_INPUT messages say it. */
export function describeRule(filter: FilterDef): string | undefined {
  const rules: string[] = [];
  if (filter.min !== undefined) rules.push(`value >= ${filter.min}`);
  if (filter.maxItems !== undefined) rules.push(`at most ${filter.maxItems} values`);
  if (filter.maxLength !== undefined) {
    rules.push(`${filter.kind === 'list' ? 'each ' : ''}at most ${filter.maxLength} characters`);
  }
  return rules.length > 0 ? rules.join(', ') : undefined;
}
