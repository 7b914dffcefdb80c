import { getNamedType, isUnionType, type GraphQLSchema } from 'graphql';
import type { Context } from '../context.js';
import { invalidArgument } from '../errors.js';
import { ENTITIES_LOOKUP_COST } from '../estimate/lookup-costs.js';
import { entityKeysByType } from '../nodes/node-types.js';

const ENTITY_TYPES = Object.keys(entityKeysByType);

type ResolveReference = (representation: unknown, context: Context, info: unknown) => unknown;

/** The `resolveReference` the federation plugin stored on an entity type's extensions. */
function resolveReferenceOf(schema: GraphQLSchema, typename: string): ResolveReference {
  const extensions = schema.getType(typename)?.extensions as
    { apollo?: { subgraph?: { resolveReference?: ResolveReference } } } | undefined;
  const resolve = extensions?.apollo?.subgraph?.resolveReference;
  if (!resolve) throw new Error(`the subgraph's entity ${typename} has no resolveReference`);
  return resolve;
}

/**
 * Finishes the subgraph's `_entities`, which the federation plugin builds rather than a Pothos
 * field: declares its cost (one lookup per representation), refuses, naming `representations`,
 * a representation whose `__typename` is not an entity of this graph, before anything runs (the
 * plugin's own message would be masked as an unexpected error), and resolves each one without
 * writing `__typename` onto the record as Apollo's resolver does: records come from cached
 * pages, frozen and shared. `_Entity` reads each record's type from the operation's record store.
 */
export function withEntitiesField(schema: GraphQLSchema): GraphQLSchema {
  const field = schema.getQueryType()?.getFields()['_entities'];
  const union = field && getNamedType(field.type);
  if (!field || !isUnionType(union)) throw new Error('the subgraph schema has no Query._entities');
  const resolvers = new Map(ENTITY_TYPES.map((name) => [name, resolveReferenceOf(schema, name)]));
  field.extensions = { ...field.extensions, ...ENTITIES_LOOKUP_COST };
  union.resolveType = (record, context: Context) => context.records.typenameOf(record) ?? undefined;
  field.resolve = (_source, args: { representations?: unknown }, context: Context, info) => {
    const representations = Array.isArray(args.representations) ? args.representations : [];
    const typenames = representations.map((representation: unknown, index) => {
      const typename = (representation as { __typename?: unknown } | null)?.__typename;
      if (typeof typename !== 'string' || !resolvers.has(typename)) {
        throw invalidArgument(
          'representations',
          `item ${index} must have a "__typename" naming an entity of this graph (${ENTITY_TYPES.join(', ')})`,
        );
      }
      return typename;
    });
    return representations.map((representation, index) =>
      resolvers.get(typenames[index]!)!(representation, context, info),
    );
  };
  return schema;
}
