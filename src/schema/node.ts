import { decodeNodeId } from '../nodes/node-types.js';
import { NODE_LOOKUP_COST, NODES_LOOKUP_COST } from '../estimate/lookup-costs.js';
import { builder } from './builder.js';
import { invalidArgument } from '../errors.js';
import { MAX_NODE_IDS } from './field-helpers.js';

/**
 * A global id argument as Pothos resolves nodes from it. Decoded here rather than by Pothos'
 * `decodeGlobalID`, which is not told the argument: a refused id names `id` or `ids`.
 */
function nodeRef(globalId: string | number, secret: string, argument: string) {
  const { typename, id } = decodeNodeId(String(globalId), secret, argument);
  return { type: typename, id };
}

builder.queryFields((t) => ({
  node: t.node({
    args: { id: t.arg.id({ required: true }) },
    extensions: NODE_LOOKUP_COST,
    id: (_root, { id }, { config }) => nodeRef(id, config.cursorSecret, 'id'),
  }),
  nodes: t.nodeList({
    args: { ids: t.arg.idList({ required: true }) },
    extensions: NODES_LOOKUP_COST,
    ids: (_root, { ids }, { config }) => {
      if (ids.length > MAX_NODE_IDS) {
        throw invalidArgument('ids', `at most ${MAX_NODE_IDS} ids (got ${ids.length})`);
      }
      return ids.map((id) => nodeRef(id, config.cursorSecret, 'ids'));
    },
  }),
}));
