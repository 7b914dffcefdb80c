import { printSubgraphSchema } from '@apollo/subgraph';
import {
  GraphQLSchema,
  isObjectType,
  Kind,
  lexicographicSortSchema,
  parse,
  print,
  printSchema,
  type ConstDirectiveNode,
  type DefinitionNode,
} from 'graphql';
import { COST_DIRECTIVES } from '../src/schema/cost-directives.js';
import { INCREMENTAL_DIRECTIVES } from '../src/schema/incremental-directives.js';
import { schema, subgraphSchema } from '../src/schema/index.js';

/** A generated SDL file at the repository's top level, and its text printed from code. */
export interface SchemaFile {
  name: string;
  print(): string;
}

const COST_DIRECTIVE_NAMES = new Set(COST_DIRECTIVES.map((directive) => directive.name));

/** The cost directives among those a type or field carries (in its AST, as the plugins wrote them). */
function costDirectivesOf(
  node: { readonly directives?: readonly ConstDirectiveNode[] } | null | undefined,
): readonly ConstDirectiveNode[] {
  return node?.directives?.filter((d) => COST_DIRECTIVE_NAMES.has(d.name.value)) ?? [];
}

/**
 * The SDL of `/graphql`, types and fields in a stable order, with the cost directives applied on
 * its object types and fields, and defined as their specification writes them (argument order
 * included), so that tools can read the costs; then `@defer` and `@stream`. graphql-js prints no applied directive, and the
 * federation directives (`@key`, `@shareable`) belong to the subgraph's SDL only.
 */
function printWithCostDirectives(graphqlSchema: GraphQLSchema): string {
  const sorted = lexicographicSortSchema(graphqlSchema);
  const definitions: DefinitionNode[] = [
    ...parse(printSchema(new GraphQLSchema({ directives: COST_DIRECTIVES }))).definitions,
    ...parse(printSchema(new GraphQLSchema({ directives: INCREMENTAL_DIRECTIVES }))).definitions,
  ];
  for (const definition of parse(printSchema(sorted)).definitions) {
    if (definition.kind === Kind.DIRECTIVE_DEFINITION) continue;
    const type = sorted.getType((definition as { name?: { value: string } }).name?.value ?? '');
    if (definition.kind !== Kind.OBJECT_TYPE_DEFINITION || !isObjectType(type)) {
      definitions.push(definition);
      continue;
    }
    const fields = type.getFields();
    definitions.push({
      ...definition,
      directives: [...(definition.directives ?? []), ...costDirectivesOf(type.astNode)],
      fields: definition.fields?.map((field) => ({
        ...field,
        directives: [
          ...(field.directives ?? []),
          ...costDirectivesOf(fields[field.name.value]?.astNode),
        ],
      })),
    } satisfies DefinitionNode);
  }
  return spaceDescriptions(print({ kind: Kind.DOCUMENT, definitions }));
}

/**
 * The layout of graphql-js's `printSchema`, which `print` lacks: a blank line before the
 * description of a field or an argument, unless it opens its block.
 */
function spaceDescriptions(sdl: string): string {
  const lines: string[] = [];
  let inDescription = false;
  for (const line of sdl.split('\n')) {
    const text = line.trimStart();
    if (inDescription) {
      inDescription = !text.endsWith('"""');
    } else if (text.startsWith('"""') && text !== line) {
      const previous = lines.at(-1) ?? '';
      if (!previous.endsWith('{') && !previous.endsWith('(')) lines.push('');
      inDescription = text === '"""';
    }
    lines.push(line);
  }
  return lines.join('\n');
}

/** The files `npm run schema:print` writes and `--check` compares (a test does too). */
export const SCHEMA_FILES: readonly SchemaFile[] = [
  // The schema of /graphql, with the cost directives.
  { name: 'schema.graphql', print: () => `${printWithCostDirectives(schema)}\n` },
  // The SDL of /subgraph as a composer reads it (with `@link`, the `@key`s and the cost
  // directives, imported from Apollo Federation), as `_service { sdl }` answers it.
  { name: 'subgraph.graphql', print: () => `${printSubgraphSchema(subgraphSchema)}\n` },
];
