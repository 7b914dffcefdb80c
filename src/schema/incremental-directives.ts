import type { GraphQLDirective } from 'graphql';
import { GraphQLDeferDirective, GraphQLStreamDirective } from '@graphql-tools/utils';

/**
 * `@defer` (on fragments) and `@stream` (on list fields) as the executor that delivers them reads
 * them (`@graphql-tools/executor`, which `@graphql-yoga/plugin-defer-stream` runs them on):
 * declared in `/graphql`'s schema, so that `schema.graphql` shows clients what they may ask. The
 * subgraph declares neither: a federation router splits a deferred query itself.
 */
export const INCREMENTAL_DIRECTIVES: readonly GraphQLDirective[] = [
  GraphQLDeferDirective,
  GraphQLStreamDirective,
];
