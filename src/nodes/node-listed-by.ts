import type { EndpointName } from '../upstream/endpoints.js';
import { acquisitionNode } from './acquisition-node.js';
import { companyNode } from './company-node.js';
import { execMoveNode } from './exec-move-node.js';
import { fundingEventNode } from './funding-event-node.js';
import { investorNode } from './investor-node.js';

/** The node type of the records each endpoint lists in `data`. */
export const nodeListedBy = {
  companies: companyNode,
  investors: investorNode,
  execMoves: execMoveNode,
  acquisitions: acquisitionNode,
  fundingEvents: fundingEventNode,
} as const satisfies Record<EndpointName, unknown>;
