import SchemaBuilder from '@pothos/core';
import DirectivePlugin from '@pothos/plugin-directives';
import FederationPlugin from '@pothos/plugin-federation';
import RelayPlugin from '@pothos/plugin-relay';
import type { Context } from '../context.js';
import CostDirectivesPlugin from './cost-directives-plugin.js';
import { encodeGlobalId } from '../nodes/global-id.js';
import { decodeNodeId } from '../nodes/node-types.js';
import NodeIdPlugin from './node-id-plugin.js';

/** The one set of type parameters every resolver is checked against. */
export interface SchemaTypes {
  Context: Context;
  Scalars: {
    DateTime: { Input: string; Output: string | Date };
    SafeInt: { Input: number; Output: number | string };
    JSON: { Input: unknown; Output: unknown };
  };
  DefaultEdgesNullability: false;
  DefaultNodeNullability: false;
}

export const builder = new SchemaBuilder<SchemaTypes>({
  // Federation after the plugins that wrap resolvers. Its directives, and the cost directives,
  // ride on DirectivePlugin: `@key`s and `@shareable` are printed in the subgraph's SDL only,
  // `@cost` and `@listSize` in both schemas.
  plugins: [RelayPlugin, NodeIdPlugin, CostDirectivesPlugin, DirectivePlugin, FederationPlugin],
  relay: {
    clientMutationId: 'omit',
    cursorType: 'String',
    nodesOnConnection: true,
    edgesFieldOptions: { nullable: false },
    nodeFieldOptions: { nullable: false },
    // Query.node and Query.nodes are in node.ts, so that a refused id names its argument.
    nodeQueryOptions: false,
    nodesQueryOptions: false,
    // Most graphs a subgraph joins have a PageInfo of their own: the same fields, shareable.
    pageInfoTypeOptions: { shareable: true },
    // Loaded records are not branded with their type: cached pages are frozen and shared by
    // every operation. `Node` reads the type from the operation's record store instead.
    brandLoadedObjects: false,
    nodeTypeOptions: { resolveType: (record, { records }) => records.typenameOf(record) },
    encodeGlobalID: (typename, id, { config }) => encodeGlobalId(typename, id, config.cursorSecret),
    decodeGlobalID: (globalId, { config }) => decodeNodeId(globalId, config.cursorSecret),
  },
});

builder.queryType({
  description:
    'Business signals (executive moves, acquisitions, funding rounds) and the companies and investors behind them.',
});

/** The builder's resolved type parameters, for helpers that take Pothos' field or arg builders. */
export type BuilderTypes =
  typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;
