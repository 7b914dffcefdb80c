import type { Context } from '../context.js';
import type { Representation } from '../nodes/entity-keys.js';
import { NODE_TYPE_LIST, type AnyNodeType } from '../nodes/node-types.js';
import { builder } from './builder.js';
import { nodeRef } from './node-refs.js';

/**
 * A representation's record, found as `node(id:)` finds one: through the operation's records.
 * Async, so that a refused representation fails its own item (`_entities.N`), not the list.
 */
function resolveReference(node: AnyNodeType) {
  return async (representation: Representation, context: Context) =>
    (await node.entityKeys
      .lookupOf(representation, context.config.cursorSecret)
      ?.find(context.records, context.upstream)) ?? null;
}

// Every node type is a federation entity: its `@key`s and lookup come from its declaration.
for (const node of NODE_TYPE_LIST) {
  builder.asEntity(nodeRef(node), {
    // The field sets are plain strings declared with the node type; Pothos's template type cannot
    // check a string it does not see as a literal.
    key: node.entityKeys.keys.map((fields) => builder.selection<Representation>(fields as never)),
    resolveReference: resolveReference(node) as never,
  });
}
