import { readFileSync } from 'node:fs';
import { createGatewayRuntime } from '@graphql-hive/gateway-runtime';
import { composeServices } from '@theguild/federation-composition';
import {
  isTypeDefinitionNode,
  Kind,
  parse,
  print,
  type ConstDirectiveNode,
  type DirectiveNode,
  type FieldDefinitionNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type SelectionSetNode,
  type TypeDefinitionNode,
  type TypeNode,
  type ValueNode,
} from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../helpers/start-stack.js';

/**
 * The costs the printed schemas state (`@cost`, `@listSize`) give our credit estimate to a tool
 * that reads nothing else: a router's demand control, a client, a gateway in front. A small
 * reader of the GraphQL Cost Directives specification
 * (https://ibm.github.io/graphql-specs/cost-spec.html), written here from its text and nothing of
 * ours, computes each operation's cost from `schema.graphql` and from `subgraph.graphql`; the
 * gateway answers its own estimate (`X-Credit-Estimate: only`); and Hive Gateway's demand control
 * estimates it over the supergraph composed from `subgraph.graphql`. Where the specification
 * cannot express one of our rules, or Hive Gateway reads it otherwise, the row says what they
 * count and why (docs/costs.md, "Costs in the schema").
 */

/** The directive definitions, as the specification writes them (sections 7 and 8). */
const SPEC_DEFINITIONS = /* GraphQL */ `
  directive @cost(
    weight: String!
  ) on ARGUMENT_DEFINITION | ENUM | FIELD_DEFINITION | INPUT_FIELD_DEFINITION | OBJECT | SCALAR

  directive @listSize(
    assumedSize: Int
    slicingArguments: [String!]
    sizedFields: [String!]
    requireOneSlicingArgument: Boolean = true
  ) on FIELD_DEFINITION
`;

type Variables = Record<string, unknown>;

/**
 * Static query analysis of the specification, as the routers compute it (Apollo's "static
 * estimated cost"): a field costs its weight plus its selection's cost, times the size of the
 * list it returns; its weight is its `@cost`, else its type's, else 1 for an object, interface or
 * union and 0 for a scalar or an enum (7.1), an abstract type weighing its heaviest member (7.2);
 * a list is as long as its slicing argument says, or its default value, else `assumedSize`
 * (8.1, 8.2), and `sizedFields` moves that size to the named child lists (8.3); an argument adds
 * its `@cost` (5.3.2.2). Fragments count for every type they name (an upper bound). A list no
 * directive bounds is infinite, which only matters if its items cost something.
 */
class SpecCost {
  readonly #types = new Map<string, TypeDefinitionNode>();
  readonly #fragments = new Map<string, FragmentDefinitionNode>();
  #variables: Variables = {};

  constructor(sdl: string) {
    for (const definition of parse(sdl).definitions) {
      if (isTypeDefinitionNode(definition)) this.#types.set(definition.name.value, definition);
    }
  }

  of(query: string, variables: Variables = {}): number {
    const document = parse(query);
    this.#fragments.clear();
    this.#variables = variables;
    let cost = 0;
    for (const definition of document.definitions) {
      if (definition.kind === Kind.FRAGMENT_DEFINITION) {
        this.#fragments.set(definition.name.value, definition);
      }
    }
    for (const definition of document.definitions) {
      if (definition.kind === Kind.OPERATION_DEFINITION) {
        cost += this.#selection('Query', definition.selectionSet);
      }
    }
    return cost;
  }

  #selection(typename: string, set: SelectionSetNode, sized?: Sized): number {
    let cost = 0;
    for (const selection of set.selections) {
      if (this.#skipped(selection.directives)) continue;
      if (selection.kind === Kind.FIELD) {
        cost += this.#field(typename, selection, sized);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const condition = selection.typeCondition?.name.value ?? typename;
        cost += this.#selection(condition, selection.selectionSet, sized);
      } else {
        const fragment = this.#fragments.get(selection.name.value)!;
        cost += this.#selection(fragment.typeCondition.name.value, fragment.selectionSet, sized);
      }
    }
    return cost;
  }

  #field(typename: string, node: FieldNode, sized?: Sized): number {
    // __typename and introspection: not fields of the schema's types, and free.
    if (node.name.value.startsWith('__')) return 0;
    const definition = this.#fieldsOf(typename).find((f) => f.name.value === node.name.value)!;
    const named = namedType(definition.type);
    const listSize = directive(definition.directives, 'listSize');
    const size = listSize && this.#size(listSize, definition, node);
    const sizedFields = strings(argument(listSize, 'sizedFields'));
    const within = node.selectionSet
      ? this.#selection(named, node.selectionSet, sizedFields && { fields: sizedFields, size })
      : 0;
    const each = this.#weightOf(definition.directives, named) + within;
    let count = 1;
    if (isList(definition.type)) {
      if (sized?.fields.includes(node.name.value)) count = sized.size ?? Infinity;
      else count = sizedFields ? Infinity : (size ?? Infinity);
    }
    let cost = each === 0 ? 0 : count * each;
    for (const given of node.arguments ?? []) {
      const declared = definition.arguments?.find((a) => a.name.value === given.name.value);
      cost += weight(directive(declared?.directives, 'cost')) ?? 0;
    }
    return cost;
  }

  /** The size `@listSize` gives a field's list in this query (8.1, 8.2, 8.4). */
  #size(
    listSize: ConstDirectiveNode,
    definition: FieldDefinitionNode,
    node: FieldNode,
  ): number | undefined {
    const values: number[] = [];
    for (const name of strings(argument(listSize, 'slicingArguments')) ?? []) {
      const given = node.arguments?.find((a) => a.name.value === name)?.value;
      const value = given
        ? this.#value(given)
        : this.#value(definition.arguments?.find((a) => a.name.value === name)?.defaultValue);
      if (typeof value === 'number') values.push(value);
    }
    const requireOne = argument(listSize, 'requireOneSlicingArgument');
    const required = requireOne?.kind === Kind.BOOLEAN ? requireOne.value : true;
    if (argument(listSize, 'slicingArguments') && required && values.length !== 1) {
      throw new Error(`${definition.name.value}: exactly one slicing argument is required`);
    }
    if (values.length > 0) return Math.max(...values);
    const assumed = argument(listSize, 'assumedSize');
    return assumed?.kind === Kind.INT ? Number(assumed.value) : undefined;
  }

  #weightOf(directives: readonly ConstDirectiveNode[] | undefined, typename: string): number {
    const own = weight(directive(directives, 'cost'));
    if (own !== undefined) return own;
    const type = this.#types.get(typename);
    const ofType = weight(directive(type?.directives, 'cost'));
    if (ofType !== undefined) return ofType;
    switch (type?.kind) {
      case Kind.OBJECT_TYPE_DEFINITION:
        return 1;
      case Kind.INTERFACE_TYPE_DEFINITION:
      case Kind.UNION_TYPE_DEFINITION:
        return Math.max(...this.#members(typename).map((m) => this.#weightOf(undefined, m)));
      default:
        return 0; // scalars (built-in ones are not in the SDL) and enums
    }
  }

  #members(typename: string): string[] {
    const type = this.#types.get(typename);
    if (type?.kind === Kind.UNION_TYPE_DEFINITION) return type.types!.map((t) => t.name.value);
    return [...this.#types.values()]
      .filter((t) => 'interfaces' in t && t.interfaces?.some((i) => i.name.value === typename))
      .map((t) => t.name.value);
  }

  #fieldsOf(typename: string): readonly FieldDefinitionNode[] {
    const type = this.#types.get(typename);
    return type && 'fields' in type ? ((type.fields ?? []) as FieldDefinitionNode[]) : [];
  }

  #skipped(directives: readonly DirectiveNode[] | undefined): boolean {
    const skip = directive(directives, 'skip');
    const include = directive(directives, 'include');
    return (
      (skip !== undefined && this.#value(argument(skip, 'if')) === true) ||
      (include !== undefined && this.#value(argument(include, 'if')) === false)
    );
  }

  #value(value: ValueNode | undefined): unknown {
    switch (value?.kind) {
      case Kind.INT:
        return Number(value.value);
      case Kind.BOOLEAN:
        return value.value;
      case Kind.VARIABLE:
        return this.#variables[value.name.value];
      default:
        return undefined;
    }
  }
}

/** The size a parent's `@listSize(sizedFields:)` gives its named child lists. */
interface Sized {
  fields: readonly string[];
  size: number | undefined;
}

function directive<D extends DirectiveNode>(directives: readonly D[] | undefined, name: string) {
  return directives?.find((d) => d.name.value === name);
}

function argument(directive: DirectiveNode | undefined, name: string): ValueNode | undefined {
  return directive?.arguments?.find((a) => a.name.value === name)?.value;
}

/** A `@cost` weight: a serialized float (the specification's `String`) or an `Int` (Apollo's). */
function weight(cost: DirectiveNode | undefined): number | undefined {
  const value = argument(cost, 'weight');
  return value && 'value' in value ? Number(value.value) : undefined;
}

function strings(value: ValueNode | undefined): string[] | undefined {
  return value?.kind === Kind.LIST
    ? value.values.map((v) => (v.kind === Kind.STRING ? v.value : ''))
    : undefined;
}

function namedType(type: TypeNode): string {
  return type.kind === Kind.NAMED_TYPE ? type.name.value : namedType(type.type);
}

function isList(type: TypeNode): boolean {
  return type.kind === Kind.LIST_TYPE || (type.kind === Kind.NON_NULL_TYPE && isList(type.type));
}

const SDL_FILES = ['schema.graphql', 'subgraph.graphql'] as const;
const sdlOf = (name: string) => readFileSync(new URL(`../../${name}`, import.meta.url), 'utf8');
const readers = SDL_FILES.map((name) => [name, new SpecCost(sdlOf(name))] as const);

/** Ids and keys of the sandbox's records, read once through the gateway. */
interface Known {
  companyId: string;
  companyUuid: string;
  companyDomain: string;
  personUuid: string;
  investorDomain: string;
  investorUuid: string;
  fundingEventId: string;
  execMoveId: string;
  midPageCursor: string;
}

interface Row {
  name: string;
  query: (k: Known) => string;
  variables?: (k: Known) => Variables;
  /** Our estimate, in credits. */
  credits: number;
  /**
   * Where the specification cannot express our rule: what its cost is, and why. Elsewhere the
   * specification's cost from either schema is our estimate.
   */
  specDiffers?: { cost: number; because: string };
  /** Where Hive Gateway's demand control counts otherwise than the specification: what, and why. */
  hiveDiffers?: { cost: number; because: string };
}

/** Why Hive Gateway (2.12) counts some operations otherwise than the specification. */
const HIVE = {
  noSlicingValue:
    'it sizes a connection by its slicing argument alone, and counts one record without it (0 included), not the assumedSize fallback',
  namedFragments:
    'it counts a named fragment once, where it is defined, not at each spread under a list',
  skipInclude: 'it ignores @skip and @include',
  interfaceWeight:
    "it adds a field's weight to its type's, and the Node interface, on which @cost is not allowed, weighs 1",
};

const rows: Row[] = [
  {
    name: 'a list: first records',
    query: () => `{ fundingEvents(first: 50) { nodes { uuid round } } }`,
    credits: 50,
  },
  {
    name: 'edges, a cursor and pageInfo',
    query: () =>
      `{ companies(first: 10) { edges { cursor node { name } } pageInfo { hasNextPage endCursor } } }`,
    credits: 10,
  },
  {
    name: 'no first: the default page size',
    query: () => `{ companies { nodes { name } } }`,
    credits: 20,
    hiveDiffers: { cost: 1, because: HIVE.noSlicingValue },
  },
  {
    name: 'first from a variable',
    query: () => `query ($n: Int) { investors(first: $n) { nodes { name type } } }`,
    variables: () => ({ n: 7 }),
    credits: 7,
  },
  {
    name: 'first: 0',
    query: () => `{ acquisitions(first: 0) { nodes { uuid } } }`,
    credits: 0,
    hiveDiffers: { cost: 1, because: HIVE.noSlicingValue },
  },
  {
    name: 'first above an upstream page (chained pages)',
    query: () => `{ execMoves(first: 250) { nodes { role } } }`,
    credits: 250,
  },
  {
    name: 'a connection under each record: 10 + 10 x 3',
    query: () =>
      `{ fundingEvents(first: 10) { nodes { company { execMoves(first: 3) { nodes { role person { name } } } } } } }`,
    credits: 40,
  },
  {
    name: 'two nested connections, one at the default size: 5 + 5 x (4 + 20)',
    query: () => `{ companies(first: 5) { edges { node {
      fundingEvents(first: 4) { edges { node { round } } }
      acquisitions { nodes { uuid } }
    } } } }`,
    credits: 125,
    hiveDiffers: { cost: 30, because: HIVE.noSlicingValue },
  },
  {
    name: 'embedded records are free',
    query: () => `{ execMoves(first: 5) { nodes {
      person { name } company { name hqCountry { code } } fromCompany { name } sources { url }
    } } }`,
    credits: 5,
  },
  {
    name: 'aliases add up',
    query: () => `{
      a: fundingEvents(first: 2, round: ["seed"]) { nodes { uuid } }
      b: fundingEvents(first: 3, round: ["series_a"]) { nodes { uuid } }
    }`,
    credits: 5,
  },
  {
    name: 'a named fragment: 4 + 4 x 2',
    query: () => `
      fragment Rounds on Company { name fundingEvents(first: 2) { nodes { round } } }
      { companies(first: 4) { nodes { ...Rounds } } }`,
    credits: 12,
    hiveDiffers: { cost: 6, because: HIVE.namedFragments },
  },
  {
    name: '@skip and @include, literal and from variables',
    query: () => `query ($yes: Boolean!) { companies(first: 5) { nodes {
      name
      a: fundingEvents(first: 3) @skip(if: true) { nodes { round } }
      b: execMoves(first: 2) @include(if: $yes) { nodes { role } }
      c: acquisitions(first: 4) @skip(if: $yes) { nodes { uuid } }
    } } }`,
    variables: () => ({ yes: true }),
    credits: 15,
    hiveDiffers: { cost: 50, because: HIVE.skipInclude },
  },
  {
    name: "a round's investors with details: 10 + 10 x 3 investors loaded",
    query: () => `{ fundingEvents(first: 10) { nodes { round investors { name domain type } } } }`,
    credits: 40,
  },
  {
    name: 'a company by domain, with its rounds: 1 + 5',
    query: (k) =>
      `{ company(domain: "${k.companyDomain}") { name fundingEvents(first: 5) { nodes { round } } } }`,
    credits: 6,
  },
  {
    name: 'a company by id',
    query: (k) => `{ company(id: "${k.companyId}") { name hqCountry { name } } }`,
    credits: 1,
  },
  {
    name: 'a company by a bare uuid (read from its newest event)',
    query: (k) => `{ company(uuid: "${k.companyUuid}") { name } }`,
    credits: 1,
  },
  {
    name: 'a person, with their moves: 1 + 2',
    query: (k) =>
      `{ person(uuid: "${k.personUuid}") { name execMoves(first: 2) { nodes { role } } } }`,
    credits: 3,
  },
  {
    name: 'an investor by domain',
    query: (k) => `{ investor(domain: "${k.investorDomain}") { name type } }`,
    credits: 1,
  },
  {
    name: 'node(id:) of a funding round',
    query: (k) =>
      `{ node(id: "${k.fundingEventId}") { id ... on FundingEvent { round company { name } } } }`,
    credits: 1,
    hiveDiffers: { cost: 2, because: HIVE.interfaceWeight },
  },
  {
    name: 'introspection and __typename',
    query: () => `{ __typename __schema { queryType { name } } }`,
    credits: 0,
  },
  {
    name: 'an investor by a bare uuid',
    query: (k) => `{ investor(uuid: "${k.investorUuid}") { name } }`,
    credits: 0,
    specDiffers: {
      cost: 1,
      because:
        'a bare uuid carries no name to search by: the gateway sends nothing; the schema cannot tell which key an argument holds, so it states the worst case, one credit',
    },
  },
  {
    name: 'node(id:) with fragments on two types',
    query: (k) => `{ node(id: "${k.companyId}") {
      ... on Company { fundingEvents(first: 5) { nodes { round } } }
      ... on Person { execMoves(first: 5) { nodes { role } } }
    } }`,
    credits: 6,
    specDiffers: {
      cost: 11,
      because:
        'the gateway reads the type from the id (a Company: 1 + 5); the specification adds every fragment, whatever the id names',
    },
    hiveDiffers: { cost: 12, because: HIVE.interfaceWeight },
  },
  {
    name: 'nodes(ids:) of two ids',
    query: (k) => `{ nodes(ids: ["${k.fundingEventId}", "${k.execMoveId}"]) { id } }`,
    credits: 2,
    specDiffers: {
      cost: 100,
      because:
        'a list argument cannot size a list (slicing arguments are integers): the schema states the most ids, 100',
    },
    hiveDiffers: { cost: 200, because: HIVE.interfaceWeight },
  },
  {
    name: "a round's investors, only what the round carries",
    query: () => `{ fundingEvents(first: 10) { nodes { investors { id uuid name } } } }`,
    credits: 10,
    specDiffers: {
      cost: 40,
      because:
        "id, uuid and name come with the round, and only another field loads an investor; a field's weight cannot depend on which of its item's fields are asked, so the schema states the load",
    },
  },
  {
    name: 'edges and nodes of one connection',
    query: () => `{ companies(first: 5) { edges { cursor } nodes { name } } }`,
    credits: 5,
    specDiffers: {
      cost: 10,
      because:
        'they are the same five records, paid once; each sized field carries the per-record weight, so asking both counts them twice',
    },
  },
  {
    name: 'a connection without edges or nodes',
    query: () => `{ companies(first: 5) { pageInfo { hasNextPage } } }`,
    credits: 5,
    specDiffers: {
      cost: 0,
      because:
        'the page is fetched and paid all the same; in the specification only fields asked cost, and only edges and nodes can be sized',
    },
  },
  {
    name: 'resuming in the middle of an upstream page',
    query: (k) => `{ fundingEvents(first: 5, after: "${k.midPageCursor}") { nodes { uuid } } }`,
    credits: 8,
    specDiffers: {
      cost: 5,
      because:
        'the cursor resumes after the third record of a page, which the service charges again; only the gateway can read a cursor',
    },
  },
  {
    name: 'the same connection from a fragment and directly',
    query: () => `
      fragment Roles on FundingEvent { company { execMoves(first: 2) { nodes { role } } } }
      { fundingEvents(first: 5) { nodes { company { execMoves(first: 2) { nodes { uuid } } } ...Roles } } }`,
    credits: 15,
    specDiffers: {
      cost: 25,
      because:
        'the gateway merges fields of one response key, as they execute; the specification counts each selection',
    },
    hiveDiffers: { cost: 17, because: HIVE.namedFragments },
  },
];

let stack: Stack;
let known: Known;
let router: ReturnType<typeof createGatewayRuntime>;
beforeAll(async () => {
  stack = await startStack();
  const composed = composeServices([
    {
      name: 'business-signals',
      typeDefs: parse(sdlOf('subgraph.graphql')),
      url: `${stack.origin}/subgraph`,
    },
  ]);
  if (!composed.supergraphSdl) throw new Error(composed.errors?.map((e) => e.message).join('\n'));
  router = createGatewayRuntime({
    supergraph: composed.supergraphSdl,
    logging: false,
    // Every operation costs more than -1: each is refused with its estimate, before any request.
    demandControl: { maxCost: -1, includeExtensionMetadata: true },
  });
  const { data } = await stack.gql(`{
    companies(first: 1) { nodes { id uuid domain } }
    investors(first: 20) { nodes { uuid domain } }
    execMoves(first: 1) { nodes { id person { uuid } } }
    fundingEvents(first: 5) { nodes { id } edges { cursor } }
  }`);
  const company = data.companies.nodes[0];
  const investor = data.investors.nodes.find((i: { domain: string | null }) => i.domain);
  known = {
    companyId: company.id,
    companyUuid: company.uuid,
    companyDomain: company.domain,
    personUuid: data.execMoves.nodes[0].person.uuid,
    investorDomain: investor.domain,
    investorUuid: investor.uuid,
    fundingEventId: data.fundingEvents.nodes[0].id,
    execMoveId: data.execMoves.nodes[0].id,
    // After the 3rd of 5 records: resuming re-reads the three before it.
    midPageCursor: data.fundingEvents.edges[2].cursor,
  };
});
afterAll(async () => {
  await router?.dispose();
  await stack?.close();
});

/** The gateway's estimate of an operation, without running it. */
async function estimateOf(row: Row): Promise<number> {
  const response = await stack.gql(row.query(known), row.variables?.(known), {
    headers: { 'x-credit-estimate': 'only' },
  });
  expect(response.errors).toBeUndefined();
  return (response.extensions!.credits as unknown as { estimate: number }).estimate;
}

/** Hive Gateway's estimate of an operation (`demandControl`), from the composed supergraph. */
async function hiveEstimateOf(row: Row): Promise<number> {
  const response = await router.fetch('http://router.local/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: row.query(known), variables: row.variables?.(known) }),
  });
  const body = (await response.json()) as {
    errors?: { extensions?: { cost?: { estimated: number } } }[];
    extensions?: { cost?: { estimated: number } };
  };
  return (body.errors?.[0]?.extensions?.cost ?? body.extensions?.cost)!.estimated;
}

describe('the printed schemas state the costs', () => {
  it('schema.graphql defines @cost and @listSize as the specification writes them', () => {
    // Beside them, @defer and @stream (test/gateway/defer-stream.test.ts).
    const printed = parse(sdlOf('schema.graphql')).definitions.filter(
      (d) => d.kind === Kind.DIRECTIVE_DEFINITION && ['cost', 'listSize'].includes(d.name.value),
    );
    expect(printed.map((d) => print(d))).toEqual(
      parse(SPEC_DEFINITIONS).definitions.map((d) => print(d)),
    );
  });

  it('subgraph.graphql imports them from Apollo Federation, whose @cost weighs an Int', () => {
    expect(sdlOf('subgraph.graphql')).toContain(
      '@link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@key", "@shareable", "@cost", "@listSize"])',
    );
  });
});

describe.each(rows.map((row) => [row.name, row] as const))('%s', (_name, row) => {
  it(`our estimate: ${row.credits} credits`, async () => {
    expect(await estimateOf(row)).toBe(row.credits);
  });

  const specCost = row.specDiffers?.cost ?? row.credits;
  it.each(readers)(
    `the specification's cost from %s: ${row.specDiffers ? `${specCost}, since ${row.specDiffers.because}` : 'the same'}`,
    (_file, reader) => {
      expect(reader.of(row.query(known), row.variables?.(known))).toBe(specCost);
    },
  );

  const hiveCost = row.hiveDiffers?.cost ?? specCost;
  it(`Hive Gateway's demand control, over the supergraph: ${row.hiveDiffers ? `${hiveCost}, since ${row.hiveDiffers.because}` : 'as the specification'}`, async () => {
    expect(await hiveEstimateOf(row)).toBe(hiveCost);
  });
});

it('the table has at least 15 operations the specification counts as we do', () => {
  expect(rows.filter((row) => !row.specDiffers).length).toBeGreaterThanOrEqual(15);
});
