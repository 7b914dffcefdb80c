import {
  getNamedType,
  getNullableType,
  isListType,
  isObjectType,
  type GraphQLField,
  type GraphQLObjectType,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import { creditCostOf } from '../../src/estimate/credit-cost.js';
import { schema, subgraphSchema } from '../../src/schema/index.js';

const objectTypes = Object.values(schema.getTypeMap()).filter(
  (type): type is GraphQLObjectType => isObjectType(type) && !type.name.startsWith('__'),
);
const fields = objectTypes.flatMap((type) =>
  Object.values(type.getFields()).map(
    (field) => [`${type.name}.${field.name}`, type, field] as const,
  ),
);
/** The gateway's own state (the caller's alerts): no service record, no credit (`local`). */
const isLocal = (name: string) => /^(Query\.alerts?|Alert\.deliveries)$/.test(name);
const isConnectionType = (type: GraphQLObjectType) => type.name.endsWith('Connection');

/** Whether a value of `type` is only leaves: nothing under it can spend or hold a record. */
function isPlain(type: GraphQLObjectType): boolean {
  return (
    !type.getInterfaces().some((i) => i.name === 'Node') &&
    Object.values(type.getFields()).every((f) => !isObjectType(getNamedType(f.type)))
  );
}

describe('every field that can spend declares its cost (the estimate reads nothing else)', () => {
  it.each(fields.filter(([name]) => isLocal(name)))(
    '%s, local: it costs nothing',
    (_name, _type, field) => {
      expect(creditCostOf(field as GraphQLField<unknown, unknown>)?.kind).toBe('local');
    },
  );

  it.each(
    fields.filter(
      ([name, , field]) => !isLocal(name) && isConnectionType(getNamedType(field.type) as never),
    ),
  )('%s, a connection', (_name, _type, field) => {
    expect(creditCostOf(field as GraphQLField<unknown, unknown>)?.kind).toBe('connection');
  });

  it.each(
    Object.values(schema.getQueryType()!.getFields())
      .filter((field) => !isLocal(`Query.${field.name}`))
      .filter((field) => !isConnectionType(getNamedType(field.type) as GraphQLObjectType))
      .map((field) => [field.name, field] as const),
  )("Query.%s, a lookup, with its worst case for the schema's @cost", (_name, field) => {
    const cost = creditCostOf(field);
    expect(cost?.kind).toBe('lookup');
    expect(cost?.kind === 'lookup' && cost.worstCase).toBeTruthy();
  });

  it("the subgraph's Query._entities, a lookup per representation", () => {
    const entities = subgraphSchema.getQueryType()!.getFields()['_entities']!;
    expect(creditCostOf(entities)?.kind).toBe('lookup');
  });

  it('a list of references declares the size it is counted at, and what loading an item costs', () => {
    const references = fields.flatMap(([name, , field]) => {
      const cost = creditCostOf(field as GraphQLField<unknown, unknown>);
      return cost?.kind === 'references' ? [[name, cost] as const] : [];
    });
    expect(references.map(([name]) => name)).toEqual(['FundingEvent.investors']);
    for (const [, cost] of references) {
      expect(Number.isInteger(cost.assumedSize) && cost.assumedSize > 0).toBe(true);
      expect(cost.load.assumedCost).toBeGreaterThan(0);
    }
  });

  it('a list of objects outside a connection is counted, or holds only leaves', () => {
    const unbounded = fields
      .filter(([, type, field]) => {
        const item = getNamedType(field.type);
        return (
          !isConnectionType(type) &&
          isListType(getNullableType(field.type)) &&
          isObjectType(item) &&
          !creditCostOf(field) &&
          !isPlain(item)
        );
      })
      .map(([name]) => name);
    expect(unbounded).toEqual([]);
  });
});
