import type { GraphQLSchema } from 'graphql';
import { invalidArgument } from '../errors.js';
import { ENTITIES_LOOKUP_COST } from '../estimate/lookup-costs.js';
import { entityKeysByType } from '../nodes/entity-keys.js';

const ENTITY_TYPES = Object.keys(entityKeysByType);

/**
 * Finishes the subgraph's `_entities`, which the federation plugin builds rather than a Pothos
 * field: declares its cost (one lookup per representation), and refuses, naming
 * `representations`, a representation whose `__typename` is not an entity of this graph, before
 * anything runs (the plugin's own message would be masked as an unexpected error).
 */
export function withEntitiesField(schema: GraphQLSchema): GraphQLSchema {
  const field = schema.getQueryType()?.getFields()['_entities'];
  const resolve = field?.resolve;
  if (!field || !resolve) throw new Error('the subgraph schema has no Query._entities');
  field.extensions = { ...field.extensions, ...ENTITIES_LOOKUP_COST };
  field.resolve = (source, args: { representations?: unknown }, context, info) => {
    const representations = Array.isArray(args.representations) ? args.representations : [];
    representations.forEach((representation: unknown, index) => {
      const typename = (representation as { __typename?: unknown } | null)?.__typename;
      if (typeof typename !== 'string' || !ENTITY_TYPES.includes(typename)) {
        throw invalidArgument(
          'representations',
          `item ${index} must have a "__typename" naming an entity of this graph (${ENTITY_TYPES.join(', ')})`,
        );
      }
    });
    return resolve(source, args, context, info);
  };
  return schema;
}
