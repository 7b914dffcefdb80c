import { invalidArgument } from '../errors.js';
import type { EndpointName } from '../upstream/endpoints.js';
import type { UpstreamSession } from '../upstream/upstream-session.js';
import { entityKeysOf, type EntityKeyDeclaration, type EntityKeys } from './entity-keys.js';
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
