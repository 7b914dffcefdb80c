import { acquisitionNode } from './acquisition-node.js';
import { companyNode } from './company-node.js';
import { execMoveNode } from './exec-move-node.js';
import { fundingEventNode } from './funding-event-node.js';
import { readGlobalId, type NodeTypeName } from './global-id.js';
import { investorNode } from './investor-node.js';
import type { LookupCost } from './lookup-cost.js';
import type { NodeType } from './node-type.js';
import { personNode } from './person-node.js';

/** Every node type by its GraphQL name. */
export const nodeTypes: Record<NodeTypeName, NodeType<{ id: string }, string, { id: string }>> = {
  Company: companyNode,
  Investor: investorNode,
  Person: personNode,
  ExecMove: execMoveNode,
  Acquisition: acquisitionNode,
  FundingEvent: fundingEventNode,
} as never;

/**
 * The type a global id names and what looking it up costs; null for an id that is not one of
 * this gateway's (its lookup is refused for nothing).
 */
export function lookupOfGlobalId(
  globalId: string,
  secret: string,
): { typename: NodeTypeName; cost: LookupCost } | null {
  const read = readGlobalId(globalId, secret);
  if (!read) return null;
  const node = nodeTypes[read.typename];
  return { typename: read.typename, cost: node.findCost(node.parseLocalId(read.localId)) };
}
