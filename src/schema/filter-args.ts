import type { ArgBuilder } from '@pothos/core';
import { invalidArgument } from '../errors.js';
import { uuidFromIdArgument } from '../global-id.js';
import { endpoints, type EndpointFilters, type EndpointName } from '../upstream/endpoints.js';
import type { BuilderTypes } from './builder.js';

type Arg = ArgBuilder<BuilderTypes>;

/**
 * The filter arguments of each list, under the spec's names. Lists nested under a company or a
 * person leave out the argument that the parent fixes.
 */

const since = (arg: Arg, what: string) =>
  arg({ type: 'DateTime', description: `Only ${what} after this time.` });

const amount = (arg: Arg, bound: string) =>
  arg.float({ description: `${bound} amount in US dollars; value >= 0.` });

const year = (arg: Arg, bound: string) =>
  arg.int({ description: `${bound} founded year (inclusive); value >= 0.` });

export const companyIdArg = (arg: Arg, description: string) =>
  arg.id({ description: `${description} Accepts a Company \`id\` or its \`uuid\`.` });

export const personIdArg = (arg: Arg) =>
  arg.id({ description: 'Only moves of this person. Accepts a Person `id` or its `uuid`.' });

export const execMoveFilterArgs = (arg: Arg) => ({
  roleSeniority: arg.stringList({
    description: 'Seniority classes, any of (e.g. `c_level`); open-ended values.',
  }),
  moveType: arg.stringList({
    description: 'Kinds of move, any of (appointment, promotion, departure, transition).',
  }),
  since: since(arg, 'moves discovered or announced'),
  until: arg({
    type: 'DateTime',
    description: 'Only moves discovered or announced before this time.',
  }),
});

export const acquisitionFilterArgs = (arg: Arg) => ({
  paymentType: arg.stringList({ description: 'Payment types, any of (e.g. `cash`).' }),
  minAmountUsd: amount(arg, 'Minimum deal'),
  maxAmountUsd: amount(arg, 'Maximum deal'),
  isMerger: arg.boolean({ description: 'true: only mergers; false: only other acquisitions.' }),
  since: since(arg, 'deals discovered or announced'),
});

export const fundingEventFilterArgs = (arg: Arg) => ({
  round: arg.stringList({ description: 'Funding rounds, any of (e.g. `series_a`).' }),
  minAmountUsd: amount(arg, 'Minimum funding'),
  maxAmountUsd: amount(arg, 'Maximum funding'),
  country: arg.string({ description: "Company headquarters' country code." }),
  industryGroup: arg.string({ description: 'Company industry group.' }),
  since: since(arg, 'rounds discovered or announced'),
});

export const companyFilterArgs = (arg: Arg) => ({
  search: arg.string({ description: 'Keyword search over name, domain and description.' }),
  domain: arg.string({ description: 'Exact company domain.' }),
  country: arg.string({ description: 'Headquarters country code.' }),
  industryGroup: arg.string({ description: 'Industry group.' }),
  employeeCountBucket: arg.string({ description: 'Employee count bucket label, e.g. `51-200`.' }),
  foundedYearMin: year(arg, 'Minimum'),
  foundedYearMax: year(arg, 'Maximum'),
  since: since(arg, 'companies created or updated'),
});

export const investorFilterArgs = (arg: Arg) => ({
  search: arg.string({ description: 'Keyword search over name and domain.' }),
  type: arg.stringList({ description: 'Investor types, any of (e.g. `vc`).' }),
  country: arg.string({ description: 'Headquarters country code.' }),
  domain: arg.string({ description: 'Exact investor domain.' }),
  since: since(arg, 'investors created or updated'),
});

const NON_NEGATIVE = new Set(['minAmountUsd', 'maxAmountUsd', 'foundedYearMin', 'foundedYearMax']);

/**
 * Turns GraphQL arguments into the endpoint's upstream filters, checking the spec's rules first
 * so that a bad value costs no request: throws INVALID_INPUT naming the argument.
 */
export function toFilters<E extends EndpointName>(
  endpoint: E,
  args: object,
  fixed: EndpointFilters<E> = {},
): EndpointFilters<E> {
  const filters: Record<string, unknown> = {};
  for (const name of Object.keys(endpoints[endpoint].filters)) {
    const value = (args as Record<string, unknown>)[name];
    if (value === undefined || value === null) continue;
    if (NON_NEGATIVE.has(name) && (value as number) < 0) {
      throw invalidArgument(name, `must be >= 0 (got ${String(value)})`);
    }
    if (name === 'companyId') filters[name] = uuidFromIdArgument(String(value), 'Company', name);
    else if (name === 'personId') filters[name] = uuidFromIdArgument(String(value), 'Person', name);
    else filters[name] = value;
  }
  return { ...(filters as EndpointFilters<E>), ...fixed };
}
