import { invalidArgument } from '../errors.js';
import type { EndpointName } from '../upstream/endpoints.js';
import type { UpstreamSession } from '../upstream/upstream-session.js';
import { text, type Representation } from './entity-keys.js';
import { formatLocalId, inspectGlobalId, isUuid, parseLocalId, refusedId } from './global-id.js';
import type { LookupCost } from './lookup-cost.js';

/** A record's UUID and the named hints its global id carried (absent when empty). */
export type NodeId<H extends string> = { readonly uuid: string } & {
  readonly [K in H]?: string;
};

/** Tells a record store of a record found embedded in another (null items are ignored). */
export type Prime = <R extends { id: string }>(
  node: NodeType<R, never> | NodeType<R, string>,
  record: R | null | undefined,
) => void;

/**
 * The operation's records as a lookup reads them: a record of a node type by id, from memory or
 * looked up. The `RecordStore` is one; it is not imported here, since it reads the registry
 * (`node-types.ts`), which imports every declaration, and so this module.
 */
export interface OperationRecords {
  load<T extends { id: string }, H extends string>(
    node: NodeType<T, H>,
    id: NodeId<H>,
  ): Promise<T | null> | T;
}

/** How one representation is found, and what finding it costs. */
export interface EntityLookup {
  readonly cost: LookupCost;
  find(records: OperationRecords, session: UpstreamSession): Promise<unknown> | unknown;
}

/** The `@key` field sets of one node type, and how a representation of any of them is found. */
export interface EntityKeys {
  /** The field sets, `id` (the global id, which carries the lookup's hints) first. */
  readonly keys: readonly string[];
  /**
   * The lookup of a representation; null when its `id` is one of another type (it names no record
   * of this one). Throws INVALID_INPUT, naming `representations`, when it carries no key's fields
   * (as strings), and for an id this gateway did not issue, as `node(id:)` does.
   */
  lookupOf(representation: Representation, secret: string): EntityLookup | null;
}

/**
 * How a node type declares its federation keys besides `id` (the global id, which carries every
 * hint its lookup needs, so it is the key other subgraphs should store): the field sets, and the
 * lookup of a representation that has no `id` (null when it has none of their fields either).
 */
export interface EntityKeyDeclaration<H extends string> {
  readonly others: readonly string[];
  /** `byId` is the lookup of this node type by an id with those hints (its `find`). */
  lookup(
    representation: Representation,
    byId: (id: NodeId<H>) => EntityLookup,
  ): EntityLookup | null;
}

/**
 * Everything about one node type besides its GraphQL fields, declared once: its name, the
 * endpoint that lists it, how it is identified, found again by id and what that costs, the
 * records it embeds, and its federation keys. The registry (`node-types.ts`), the schema's refs
 * and `@key`s, the entity lookups and the estimate are derived from it. `Ref` is what an id is
 * written from: the record, or less (a funding event names its investors by id and name).
 */
export interface NodeDefinition<T extends { id: string }, H extends string, Ref = T> {
  /** Its GraphQL object type's name, written in its global ids. */
  readonly typename: string;
  /** The endpoint whose `data` lists records of this type; none for a type only embedded. */
  readonly listedBy?: EndpointName;
  /**
   * The hints a global id carries so that the record can be found again (the service has no
   * fetch-by-id), read from the record. Their order here is their order in the id: append only,
   * or ids already issued stop resolving.
   */
  readonly hints: { readonly [K in H]: (record: Ref) => string | null | undefined };
  /** Finds the record upstream; null when none matches. Rejects with an `UpstreamError`. */
  find(session: UpstreamSession, id: NodeId<H>): Promise<T | null>;
  /**
   * What {@link find} costs for this id: the credits of the usual case, which the estimate counts
   * for every lookup, and the most it can spend (null when the service bounds nothing), from the
   * same page sizes `find` uses.
   */
  findCost(id: NodeId<H>): LookupCost;
  /** Hands every record embedded in `record` to `prime`, with its node type. */
  embeds?(record: T, prime: Prime): void;
  /** Its federation keys besides `id`, and how a representation of them is found. */
  readonly entityKeys: EntityKeyDeclaration<H>;
}

/** A node type: its definition, and its local ids written and read from one list of hints. */
export class NodeType<
  T extends { id: string },
  H extends string = string,
  Ref extends { id: string } = T,
> {
  readonly typename: string;
  /** See {@link NodeDefinition.listedBy}. */
  readonly listedBy: EndpointName | undefined;
  /** Its `@key` field sets, `id` first, and how each representation is found. */
  readonly entityKeys: EntityKeys;
  readonly #definition: NodeDefinition<T, H, Ref>;
  readonly #hintNames: readonly H[];

  constructor(definition: NodeDefinition<T, H, Ref>) {
    this.#definition = definition;
    this.typename = definition.typename;
    this.listedBy = definition.listedBy;
    this.#hintNames = Object.keys(definition.hints) as H[];
    this.entityKeys = entityKeysOf(this, definition.entityKeys);
  }

  /** The local id of `record`: its UUID and its hints, e.g. `uuid|acme.com`. */
  localId(record: Ref): string {
    const { hints } = this.#definition;
    return formatLocalId(record.id, ...this.#hintNames.map((name) => hints[name](record)));
  }

  /** Reads a local id written by {@link localId} back into named hints. */
  parseLocalId(localId: string): NodeId<H> {
    const { uuid, hints } = parseLocalId(localId);
    const id: Record<string, string> = { uuid };
    this.#hintNames.forEach((name, i) => {
      if (hints[i]) id[name] = hints[i];
    });
    return id as NodeId<H>;
  }

  /**
   * Reads an argument that names a record of this type either by its global id (issued with
   * `secret`) or by its bare UUID (which carries no hints); throws INVALID_INPUT naming the
   * argument otherwise, before any upstream request.
   */
  idFromArgument(value: string, argument: string, secret: string): NodeId<H> {
    if (isUuid(value)) return { uuid: value } as NodeId<H>;
    const reading = inspectGlobalId(value, secret);
    if (!reading.ok) {
      if (reading.reason === 'forged') throw refusedId(argument, value, reading.reason);
      throw invalidArgument(argument, `must be a ${this.typename} id or UUID (got "${value}")`);
    }
    if (reading.typename !== this.typename) {
      throw invalidArgument(
        argument,
        `expects a ${this.typename} id, got a ${reading.typename} id`,
      );
    }
    return this.parseLocalId(reading.localId);
  }

  /** Finds the record upstream; see {@link NodeDefinition.find}. */
  find(session: UpstreamSession, id: NodeId<H>): Promise<T | null> {
    return this.#definition.find(session, id);
  }

  /** What {@link find} costs for this id; see {@link NodeDefinition.findCost}. */
  findCost(id: NodeId<H>): LookupCost {
    return this.#definition.findCost(id);
  }

  /**
   * The largest `assumedCost` of {@link findCost} over every id of this type: its hints are each
   * present or absent (a record without a domain is issued an id without it), and the cost
   * depends on which are present, not on their values.
   */
  largestAssumedCost(): number {
    let largest = 0;
    for (let present = 0; present < 2 ** this.#hintNames.length; present++) {
      const id: Record<string, string> = { uuid: 'any' };
      this.#hintNames.forEach((name, i) => {
        if (present & (2 ** i)) id[name] = 'any';
      });
      largest = Math.max(largest, this.findCost(id as NodeId<H>).assumedCost);
    }
    return largest;
  }

  /** Hands the records embedded in `record` to `prime`. */
  embeds(record: T, prime: Prime): void {
    this.#definition.embeds?.(record, prime);
  }
}

const ARGUMENT = 'representations';

/** The lookup of a record by its node type's `find`, through the operation's records. */
function byNode<T extends { id: string }, H extends string, R extends { id: string }>(
  node: NodeType<T, H, R>,
  id: NodeId<H>,
): EntityLookup {
  const loadable = node as unknown as NodeType<T, H>;
  return { cost: node.findCost(id), find: (records) => records.load(loadable, id) };
}

/**
 * The lookup of a representation by `id`, whatever its other keys: the global id carries the
 * hints every node type's `find` needs, so it is the key other subgraphs should store.
 */
function byGlobalId(
  node: NodeType<{ id: string }, string, { id: string }>,
  value: string,
  secret: string,
): EntityLookup | null {
  const reading = inspectGlobalId(value, secret);
  if (!reading.ok) throw refusedId(ARGUMENT, value, reading.reason);
  if (reading.typename !== node.typename) return null;
  return byNode(node, node.parseLocalId(reading.localId));
}

/** A node type's keys: `id`, then those it declares. */
function entityKeysOf<T extends { id: string }, H extends string, R extends { id: string }>(
  node: NodeType<T, H, R>,
  { others, lookup }: EntityKeyDeclaration<H>,
): EntityKeys {
  const anyNode = node as unknown as NodeType<{ id: string }, string, { id: string }>;
  const keys = ['id', ...others];
  return {
    keys,
    lookupOf(representation, secret) {
      const id = text(representation['id']);
      if (id) return byGlobalId(anyNode, id, secret);
      const found = lookup(representation, (hints) => byNode(node, hints));
      if (found) return found;
      throw invalidArgument(
        ARGUMENT,
        `an entity ${node.typename} needs the fields of one of its keys (${keys.map((k) => `"${k}"`).join(', ')}), as strings`,
      );
    },
  };
}
