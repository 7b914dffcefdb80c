import SchemaBuilder, {
  BasePlugin,
  type PothosOutputFieldConfig,
  type SchemaTypes,
} from '@pothos/core';
import type { GraphQLFieldResolver } from 'graphql';
import type { Context } from '../context.js';
import { encodeGlobalId } from '../nodes/global-id.js';
import { nodeTypeNamed } from '../nodes/node-types.js';

/**
 * Writes every node type's `id` synchronously: `encodeGlobalId(typename, localId,
 * CURSOR_SECRET)`, the id the relay plugin's `encodeGlobalID` would write, from the node type's
 * declared `localId`. The relay plugin resolves each id through an async wrapper, a `{ type, id }`
 * object and a type-config lookup; a 20-event page writes about 100 ids, and that wrapper was
 * the largest single allocation of a list request (55 KB of 650, `npm run bench:alloc`).
 */
export class NodeIdPlugin<Types extends SchemaTypes> extends BasePlugin<Types> {
  override wrapResolve(
    resolver: GraphQLFieldResolver<unknown, Types['Context'], object>,
    fieldConfig: PothosOutputFieldConfig<Types>,
  ): GraphQLFieldResolver<unknown, Types['Context'], object> {
    if (fieldConfig.kind !== 'Object' || fieldConfig.name !== 'id') return resolver;
    const node = nodeTypeNamed(this.buildCache.getTypeConfig(fieldConfig.parentType).name);
    if (!node) return resolver;
    return (record, _args, context) =>
      encodeGlobalId(
        node.typename,
        node.localId(record as { id: string }),
        (context as Context).config.cursorSecret,
      );
  }
}

const pluginName = 'nodeIds';

declare global {
  // Pothos plugins register their types in its global namespace: there is no module form.
  // eslint-disable-next-line @typescript-eslint/no-namespace
  export namespace PothosSchemaTypes {
    export interface Plugins<Types extends SchemaTypes> {
      nodeIds: NodeIdPlugin<Types>;
    }
  }
}

SchemaBuilder.registerPlugin(pluginName, NodeIdPlugin);

export default pluginName;
