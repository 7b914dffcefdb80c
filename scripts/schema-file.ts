import { lexicographicSortSchema, printSchema } from 'graphql';
import { schema } from '../src/schema/index.js';

/** The text of schema.graphql: the schema printed from code, types in a stable order. */
export function printSchemaFile(): string {
  return `${printSchema(lexicographicSortSchema(schema))}\n`;
}
