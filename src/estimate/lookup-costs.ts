import type { Representation } from '../nodes/entity-keys.js';
import { isUuid } from '../nodes/global-id.js';
import type { LookupCost } from '../nodes/lookup-cost.js';
import type { EntityKeys, NodeType } from '../nodes/node-type.js';
import { entityKeysByType, lookupOfGlobalId, NODE_TYPE_LIST } from '../nodes/node-types.js';
import { exactlyOne, LOOKUP_KEYS, MAX_NODE_IDS, type LookupKey } from '../schema/field-helpers.js';
import { creditCostExtension, type LookupTarget } from './credit-cost.js';

/** The target of one id argument: a bare UUID or a global id of this node type. */
function targetOfId(
  node: NodeType<{ id: string }, string, { id: string }>,
  value: string,
  secret: string,
): LookupTarget[] {
  if (isUuid(value)) return [{ typename: node.typename, cost: node.findCost({ uuid: value }) }];
  const lookup = lookupOfGlobalId(value, secret);
  return lookup?.typename === node.typename ? [lookup] : [];
}

/** The largest `assumedCost` a lookup by a global id of any node type can have. */
const ANY_NODE_ASSUMED_COST = Math.max(...NODE_TYPE_LIST.map((node) => node.largestAssumedCost()));

/**
 * The cost of a lookup field that takes exactly one of `id`, `uuid` or `domain` (`company`,
 * `investor`, `person`): what its node type's `find` costs for that id, or `byDomain`. Any
 * other combination is refused before it spends: nothing. Its worst case is the larger of the
 * two, whatever the id's hints.
 */
export function keyedLookupCost<
  T extends { id: string },
  H extends string,
  R extends { id: string },
>(node: NodeType<T, H, R>, byDomain?: LookupCost) {
  const anyNode = node as unknown as NodeType<{ id: string }, string, { id: string }>;
  return creditCostExtension({
    kind: 'lookup',
    worstCase: {
      assumedCost: Math.max(node.largestAssumedCost(), byDomain?.assumedCost ?? 0),
    },
    targets(args, { secret }) {
      let key: LookupKey;
      let value: string;
      try {
        [key, value] = exactlyOne(args, LOOKUP_KEYS);
      } catch {
        return []; // refused by the resolver before it spends
      }
      if (key === 'domain') {
        return byDomain === undefined ? [] : [{ typename: node.typename, cost: byDomain }];
      }
      return targetOfId(anyNode, value, secret);
    },
  });
}

/** The cost of `Query.node`: the lookup its id's type does. */
export const NODE_LOOKUP_COST = creditCostExtension({
  kind: 'lookup',
  worstCase: { assumedCost: ANY_NODE_ASSUMED_COST },
  targets: (args, { secret }) => {
    const lookup = lookupOfGlobalId(String(args.id), secret);
    return lookup ? [lookup] : [];
  },
});

/**
 * The cost of `Query.nodes`: one lookup per id (a repeated id is counted each time); at worst
 * {@link MAX_NODE_IDS} of them.
 */
export const NODES_LOOKUP_COST = creditCostExtension({
  kind: 'lookup',
  worstCase: { assumedCost: ANY_NODE_ASSUMED_COST, records: MAX_NODE_IDS },
  targets: (args, { secret }) => {
    const targets: LookupTarget[] = [];
    const ids = (args.ids as readonly string[] | null) ?? [];
    if (ids.length > MAX_NODE_IDS) return targets; // refused before it spends
    for (const id of ids) {
      const lookup = lookupOfGlobalId(String(id), secret);
      if (lookup) targets.push(lookup);
    }
    return targets;
  },
});

/**
 * The cost of the subgraph's `_entities`: one lookup per representation, by the key it carries
 * (its node type's `entityKeys`, src/nodes/node-type.ts), as `nodes(ids:)` counts one per id. A
 * representation that names no record, or whose id is refused, spends nothing.
 */
export const ENTITIES_LOOKUP_COST = creditCostExtension({
  kind: 'lookup',
  targets: (args, { secret }) => {
    const targets: LookupTarget[] = [];
    for (const representation of (args.representations as readonly Representation[] | null) ?? []) {
      const typename = String(representation?.['__typename']);
      const keys = (entityKeysByType as Partial<Record<string, EntityKeys>>)[typename];
      if (!keys) continue;
      try {
        const lookup = keys.lookupOf(representation, secret);
        if (lookup) targets.push({ typename, cost: lookup.cost });
      } catch {
        // A refused id: the resolver refuses it before any upstream request.
      }
    }
    return targets;
  },
});
