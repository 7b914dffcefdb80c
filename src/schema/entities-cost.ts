import type { GraphQLSchema } from 'graphql';
import { ENTITIES_LOOKUP_COST } from '../estimate/lookup-costs.js';

/**
 * Declares the cost of the subgraph's `_entities` on the built schema: the field comes from the
 * federation plugin, not from a Pothos field where `extensions` are written.
 */
export function withEntitiesCost(schema: GraphQLSchema): GraphQLSchema {
  const field = schema.getQueryType()?.getFields()['_entities'];
  if (!field) throw new Error('the subgraph schema has no Query._entities');
  field.extensions = { ...field.extensions, ...ENTITIES_LOOKUP_COST };
  return schema;
}
