import type { UpstreamSession } from '../upstream/upstream-session.js';
import { invalidArgument } from '../errors.js';
import { inspectGlobalId, refusedId } from './global-id.js';
import type { LookupCost } from './lookup-cost.js';
import type { NodeId, NodeType } from './node-type.js';
import type { RecordStore } from './record-store.js';

/** A federation representation: `__typename` and the fields of one of the type's keys. */
export type Representation = Readonly<Record<string, unknown>>;

/** How one representation is found, and what finding it costs. */
export interface EntityLookup {
  readonly cost: LookupCost;
  find(records: RecordStore, session: UpstreamSession): Promise<unknown> | unknown;
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

const ARGUMENT = 'representations';

/** A representation's field as a lookup key: a string that is not empty, else null. */
export function text(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

/** `representation[field].uuid`, for keys through an embedded record (`company { uuid }`). */
export function uuidOf(representation: Representation, field: string): string | null {
  const embedded = representation[field];
  return typeof embedded === 'object' && embedded !== null
    ? text((embedded as Record<string, unknown>)['uuid'])
    : null;
}

/** The lookup of a record by its node type's `find`, through the operation's records. */
export function byNode<T extends { id: string }, H extends string, R extends { id: string }>(
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

/** A node type's keys: `id`, then those it declares. */
export function entityKeysOf<T extends { id: string }, H extends string, R extends { id: string }>(
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
