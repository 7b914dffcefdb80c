import { printSubgraphSchema } from '@apollo/subgraph';
import { lexicographicSortSchema, printSchema } from 'graphql';
import { schema, subgraphSchema } from '../src/schema/index.js';

/** A generated SDL file at the repository's top level, and its text printed from code. */
export interface SchemaFile {
  name: string;
  print(): string;
}

/** The files `npm run schema:print` writes and `--check` compares (a test does too). */
export const SCHEMA_FILES: readonly SchemaFile[] = [
  // The schema of /graphql, types in a stable order.
  { name: 'schema.graphql', print: () => `${printSchema(lexicographicSortSchema(schema))}\n` },
  // The SDL of /subgraph as a composer reads it (with `@link` and the `@key`s), as
  // `_service { sdl }` answers it.
  { name: 'subgraph.graphql', print: () => `${printSubgraphSchema(subgraphSchema)}\n` },
];
