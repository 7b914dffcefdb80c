import {
  getDirectiveValues,
  getNamedType,
  getOperationAST,
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  isAbstractType,
  isObjectType,
  Kind,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLObjectType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { getArgumentValues } from 'graphql/execution/values.js';
import { peekPosition } from '../pagination/cursor-codec.js';
import { lookupRequests } from '../nodes/lookup-cost.js';
import { pageSize } from '../pagination/resolve-upstream-connection.js';
import { UPSTREAM_MAX_LIMIT } from '../upstream/build-query.js';
import {
  CONNECTION_RECORD_FIELDS,
  CREDITS_PER_RECORD,
  creditCostOf,
  type EstimateSettings,
} from './credit-cost.js';

/** What an operation is expected to cost, and how many records its answer is expected to hold. */
export interface Estimate {
  /**
   * Credits: every page full, nothing deduplicated; exact where the service bounds the sizes,
   * assumed sizes elsewhere (see `CreditCost`).
   */
  credits: number;
  /** Records of the node types in the answer, embedded ones included, counted the same way. */
  records: number;
  /**
   * Upstream requests: a page per `UPSTREAM_MAX_LIMIT` records of each connection, and each
   * lookup's pages, those that find nothing included (they cost no credit, but a request each).
   */
  requests: number;
}

const NOTHING: Estimate = { credits: 0, records: 0, requests: 0 };

type Variables = Record<string, unknown>;

/** What depends only on the document and the operation name, kept across requests. */
interface Plan {
  operation: OperationDefinitionNode | null;
  fragments: Record<string, FragmentDefinitionNode>;
  /** The estimate itself, when the operation takes no variables. */
  fixed?: Estimate;
}

/**
 * Walks an operation as the executor will, with the variables of one request: fields merged by
 * response key across fragments and inline fragments, `@skip`/`@include` applied, abstract types
 * (`node`, `nodes`) resolved to the type each id names.
 */
class Walk {
  constructor(
    readonly schema: GraphQLSchema,
    readonly fragments: Record<string, FragmentDefinitionNode>,
    readonly variables: Variables,
    readonly settings: EstimateSettings,
  ) {}

  /**
   * The estimate of `sets` selected on one object of `type`; on a connection's type, its
   * {@link CONNECTION_RECORD_FIELDS} hold `pageItems` items each.
   */
  selection(
    type: GraphQLObjectType,
    sets: readonly SelectionSetNode[],
    pageItems?: number,
  ): Estimate {
    let credits = 0;
    let records = 0;
    let requests = 0;
    const fields = type.getFields();
    for (const nodes of this.#collect(type, sets).values()) {
      const node = nodes[0]!;
      const field = fields[node.name.value];
      if (!field) continue;
      const named = getNamedType(field.type);
      if (!isObjectType(named) && !isAbstractType(named)) continue;
      const subSets = selectionSets(nodes);
      const cost = creditCostOf(field);
      if (cost?.kind === 'local') continue;
      if (cost?.kind === 'connection') {
        const args = getArgumentValues(field, node, this.variables);
        const first = this.#first(args);
        if (first === 0 || !isObjectType(named)) continue;
        const within = this.selection(named, subSets, first);
        const read = first + this.#reread(args.after);
        credits += read * CREDITS_PER_RECORD + within.credits;
        records += within.records;
        requests += Math.ceil(read / UPSTREAM_MAX_LIMIT) + within.requests;
      } else if (cost?.kind === 'lookup') {
        const args = getArgumentValues(field, node, this.variables);
        for (const target of cost.targets(args, this.settings)) {
          const targetType = this.schema.getType(target.typename);
          if (!isObjectType(targetType)) continue;
          const within = this.selection(targetType, subSets);
          credits += target.cost.assumedCost + within.credits;
          records += 1 + within.records;
          requests += lookupRequests(target.cost) + within.requests;
        }
      } else if (cost?.kind === 'event') {
        if (!isObjectType(named)) continue;
        const within = this.selection(named, subSets);
        credits += 1 + within.credits;
        records += 1 + within.records;
        requests += within.requests;
      } else if (cost?.kind === 'references') {
        if (!isObjectType(named)) continue;
        const within = this.selection(named, subSets);
        const loads = this.#asksBeyond(named, subSets, cost.free);
        const load = loads ? cost.load.assumedCost : 0;
        credits += cost.assumedSize * (load + within.credits);
        records += cost.assumedSize * (1 + within.records);
        requests += cost.assumedSize * ((loads ? lookupRequests(cost.load) : 0) + within.requests);
      } else if (isObjectType(named)) {
        // An embedded object, or the `edges`/`nodes` of a connection (`first` of them).
        const items = pageItems !== undefined && isRecordField(field.name) ? pageItems : 1;
        const within = this.selection(named, subSets);
        credits += items * within.credits;
        records += items * ((isNode(named) ? 1 : 0) + within.records);
        requests += items * within.requests;
      }
    }
    return { credits, records, requests };
  }

  /** `first` as the resolver takes it (`pageSize`); 0 when it refuses the arguments. */
  #first(args: Variables): number {
    try {
      return pageSize(args, this.settings);
    } catch {
      return 0;
    }
  }

  /** Records a connection re-reads to resume inside an upstream page (its cursor's `skip`). */
  #reread(after: unknown): number {
    if (typeof after !== 'string') return 0;
    return peekPosition(after)?.skip ?? 0;
  }

  /** Whether `sets` ask `type` for any field other than `free` ones (and `__typename`). */
  #asksBeyond(type: GraphQLObjectType, sets: readonly SelectionSetNode[], free: readonly string[]) {
    for (const nodes of this.#collect(type, sets).values()) {
      const name = nodes[0]!.name.value;
      if (name !== '__typename' && !free.includes(name)) return true;
    }
    return false;
  }

  /** The fields `sets` select on `type`, by response key, as graphql-js's `collectFields`. */
  #collect(type: GraphQLObjectType, sets: readonly SelectionSetNode[]) {
    const fields = new Map<string, FieldNode[]>();
    const visited = new Set<string>();
    for (const set of sets) this.#collectInto(type, set, fields, visited);
    return fields;
  }

  #collectInto(
    type: GraphQLObjectType,
    set: SelectionSetNode,
    fields: Map<string, FieldNode[]>,
    visited: Set<string>,
  ): void {
    for (const selection of set.selections) {
      if (!this.#included(selection)) continue;
      if (selection.kind === Kind.FIELD) {
        const key = selection.alias?.value ?? selection.name.value;
        const same = fields.get(key);
        if (same) same.push(selection);
        else fields.set(key, [selection]);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const condition = selection.typeCondition?.name.value;
        if (condition === undefined || this.#applies(condition, type)) {
          this.#collectInto(type, selection.selectionSet, fields, visited);
        }
      } else {
        const name = selection.name.value;
        if (visited.has(name)) continue;
        visited.add(name);
        const fragment = this.fragments[name];
        if (fragment && this.#applies(fragment.typeCondition.name.value, type)) {
          this.#collectInto(type, fragment.selectionSet, fields, visited);
        }
      }
    }
  }

  #included(node: FieldNode | SelectionSetNode['selections'][number]): boolean {
    if (!node.directives?.length) return true;
    if (getDirectiveValues(GraphQLSkipDirective, node, this.variables)?.if === true) return false;
    return getDirectiveValues(GraphQLIncludeDirective, node, this.variables)?.if !== false;
  }

  #applies(condition: string, type: GraphQLObjectType): boolean {
    if (condition === type.name) return true;
    const abstract = this.schema.getType(condition);
    return isAbstractType(abstract) && this.schema.isSubType(abstract, type);
  }
}

function selectionSets(nodes: readonly FieldNode[]): SelectionSetNode[] {
  const sets: SelectionSetNode[] = [];
  for (const node of nodes) if (node.selectionSet) sets.push(node.selectionSet);
  return sets;
}

function isRecordField(name: string): boolean {
  return (CONNECTION_RECORD_FIELDS as readonly string[]).includes(name);
}

function isNode(type: GraphQLObjectType): boolean {
  return type.getInterfaces().some((i) => i.name === 'Node');
}

/**
 * What an operation is expected to cost in credits, before it runs: each connection counts `first`
 * (or the default) times the number of parents it can be resolved under, exactly; each lookup its
 * declared `assumedCost` and each list of references its `assumedSize` (see `CreditCost`), sizes
 * the service does not bound. Over the validated document and one request's (coerced) variables.
 * The same page asked twice, or a record already seen, is counted again although the operation
 * pays for it once. What depends only on the document is planned once per document and operation
 * name (Yoga hands back the same parsed document for the same text), and an operation without
 * variables is estimated once.
 */
export function createEstimator(schema: GraphQLSchema, settings: EstimateSettings) {
  const plans = new WeakMap<DocumentNode, Map<string, Plan>>();

  function planOf(document: DocumentNode, operationName: string | null | undefined): Plan {
    let byName = plans.get(document);
    if (!byName) plans.set(document, (byName = new Map()));
    const key = operationName ?? '';
    let plan = byName.get(key);
    if (!plan) {
      const fragments: Record<string, FragmentDefinitionNode> = {};
      for (const definition of document.definitions) {
        if (definition.kind === Kind.FRAGMENT_DEFINITION) {
          fragments[definition.name.value] = definition;
        }
      }
      plan = { operation: getOperationAST(document, operationName) ?? null, fragments };
      byName.set(key, plan);
    }
    return plan;
  }

  return function estimate(
    document: DocumentNode,
    operationName: string | null | undefined,
    variables: Variables,
  ): Estimate {
    const plan = planOf(document, operationName);
    const { operation } = plan;
    // A subscription is estimated per payload: its record, and its nested fields.
    if (!operation || operation.operation === 'mutation') return NOTHING;
    if (plan.fixed) return plan.fixed;
    const root =
      operation.operation === 'query' ? schema.getQueryType() : schema.getSubscriptionType();
    if (!root) return NOTHING;
    const result = new Walk(schema, plan.fragments, variables, settings).selection(root, [
      operation.selectionSet,
    ]);
    if (!operation.variableDefinitions?.length) plan.fixed = result;
    return result;
  };
}

export type Estimator = ReturnType<typeof createEstimator>;
