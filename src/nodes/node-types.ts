import type { EndpointName } from '../upstream/endpoints.js';
import { acquisitionNode } from './acquisition-node.js';
import { companyNode } from './company-node.js';
import { execMoveNode } from './exec-move-node.js';
import { fundingEventNode } from './funding-event-node.js';
import { inspectGlobalId, refusedId } from './global-id.js';
import { investorNode } from './investor-node.js';
import type { LookupCost } from './lookup-cost.js';
import type { EntityKeys, NodeType } from './node-type.js';
import { personNode } from './person-node.js';

/** Any node type, whatever its record and hints. */
export type AnyNodeType = NodeType<{ id: string }, string, { id: string }>;

/**
 * The registry: every node type of the graph, each declared once in its own file. A new node type
 * is added here and nowhere else in `nodes/`: what follows is derived from this list.
 */
export const NODE_TYPE_LIST = [
  companyNode,
  investorNode,
  personNode,
  fundingEventNode,
  execMoveNode,
  acquisitionNode,
] as unknown as readonly AnyNodeType[];

const byName = new Map(NODE_TYPE_LIST.map((node) => [node.typename, node]));

/** The node type of this name; undefined for any other type. */
export function nodeTypeNamed(typename: string): AnyNodeType | undefined {
  return byName.get(typename);
}

/** The node type of the records each endpoint lists in `data`. */
export const nodeListedBy = Object.fromEntries(
  NODE_TYPE_LIST.flatMap((node) => (node.listedBy ? [[node.listedBy, node]] : [])),
) as Record<EndpointName, AnyNodeType>;

/** Every node type's federation keys, by type name. */
export const entityKeysByType: Readonly<Record<string, EntityKeys>> = Object.fromEntries(
  NODE_TYPE_LIST.map((node) => [node.typename, node.entityKeys]),
);

/**
 * The node type and local id of a global id this gateway issued with `secret`; null when it is
 * malformed, signed with another secret, or names no node type. For callers without a request
 * context, e.g. estimating an operation's cost before it runs.
 */
export function readNodeId(
  globalId: string,
  secret: string,
): { node: AnyNodeType; localId: string } | null {
  const reading = inspectGlobalId(globalId, secret);
  const node = reading.ok ? byName.get(reading.typename) : undefined;
  return node && reading.ok ? { node, localId: reading.localId } : null;
}

/**
 * Decodes a global id issued with `secret` into its type name and local id; throws
 * INVALID_INPUT naming `argument` when it is not one of ours: malformed, of no node type, or
 * with hints that are not signed with `secret`.
 */
export function decodeNodeId(globalId: string, secret: string, argument = 'id') {
  const reading = inspectGlobalId(globalId, secret);
  if (!reading.ok) throw refusedId(argument, globalId, reading.reason);
  if (!byName.has(reading.typename)) throw refusedId(argument, globalId, 'malformed');
  return { typename: reading.typename, id: reading.localId };
}

/**
 * The type a global id names and what looking it up costs; null for an id that is not one of
 * this gateway's (its lookup is refused for nothing).
 */
export function lookupOfGlobalId(
  globalId: string,
  secret: string,
): { typename: string; cost: LookupCost } | null {
  const read = readNodeId(globalId, secret);
  if (!read) return null;
  const { node, localId } = read;
  return { typename: node.typename, cost: node.findCost(node.parseLocalId(localId)) };
}
