import type { ArgBuilder, InputFieldMap } from '@pothos/core';
import { invalidArgument } from '../errors.js';
import { companyNode } from '../nodes/company-node.js';
import { personNode } from '../nodes/person-node.js';
import {
  describeRule,
  filtersOf,
  type EndpointFilters,
  type EndpointName,
  type FilterDef,
  type FilterName,
} from '../upstream/endpoints.js';
import type { BuilderTypes } from './builder.js';

/**
 * The filters a nested connection takes from its parent rather than from an argument, e.g.
 * `{ companyId: (company) => company.id }` under `Company.fundingEvents`.
 */
export type FixedFilters<E extends EndpointName, Parent> = {
  [K in FilterName<E>]?: (parent: Parent) => string;
};

const REFS = { Company: companyNode, Person: personNode } as const;

/**
 * The filter arguments of `endpoint`, under the spec's names, from the endpoint table; those
 * `fixed` by the parent are left out.
 */
export function filterArgs(
  arg: ArgBuilder<BuilderTypes>,
  endpoint: EndpointName,
  fixed: object = {},
): InputFieldMap {
  const args: InputFieldMap = {};
  for (const [name, filter] of filtersOf(endpoint)) {
    if (name in fixed) continue;
    const rule = describeRule(filter);
    let description = rule ? `${filter.description} Rule: ${rule}.` : filter.description;
    if (filter.ref) description += ` Accepts a ${filter.ref} \`id\` or its \`uuid\`.`;
    args[name] = arg({
      type: filter.type === '[String]' ? ['String'] : filter.type,
      required: false,
      description,
    });
  }
  return args;
}

function checkText(name: string, value: string, filter: FilterDef, what = 'must') {
  if (value.trim() === '') throw invalidArgument(name, `${what} not be empty or blank`);
  if (filter.maxLength !== undefined && value.length > filter.maxLength) {
    throw invalidArgument(
      name,
      `${what} be at most ${filter.maxLength} characters (got ${value.length})`,
    );
  }
}

/** One argument's value checked against its filter's rule, as the upstream takes it. */
function toFilterValue(name: string, value: unknown, filter: FilterDef, secret: string): unknown {
  if (filter.min !== undefined && (value as number) < filter.min) {
    throw invalidArgument(name, `must be >= ${filter.min} (got ${String(value)})`);
  }
  if (filter.ref) return REFS[filter.ref].idFromArgument(String(value), name, secret).uuid;
  if (filter.kind === 'list') {
    const list = value as readonly string[];
    if (filter.maxItems !== undefined && list.length > filter.maxItems) {
      throw invalidArgument(name, `takes at most ${filter.maxItems} values (got ${list.length})`);
    }
    for (const item of list) checkText(name, item, filter, 'each value must');
    return list.length > 0 ? list : undefined;
  }
  if (typeof value === 'string') checkText(name, value, filter);
  return value;
}

/**
 * Turns GraphQL arguments into the endpoint's upstream filters, checking each filter's rule
 * first so that a bad value costs no request: throws INVALID_INPUT naming the argument and the
 * rule. Ids (`companyId`, `personId`) must be issued with `secret` (`CURSOR_SECRET`). `fixed` adds
 * the filters the parent sets.
 */
export function toFilters<E extends EndpointName, Parent>(
  endpoint: E,
  args: object,
  secret: string,
  fixed?: FixedFilters<E, Parent>,
  parent?: Parent,
): EndpointFilters<E> {
  const filters: Record<string, unknown> = {};
  for (const [name, filter] of filtersOf(endpoint)) {
    const value = (args as Record<string, unknown>)[name];
    if (value === undefined || value === null) continue;
    filters[name] = toFilterValue(name, value, filter, secret);
  }
  if (fixed) {
    for (const [name, from] of Object.entries(fixed) as [string, (parent: Parent) => string][]) {
      filters[name] = from(parent as Parent);
    }
  }
  return filters as EndpointFilters<E>;
}
