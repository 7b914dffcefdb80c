import type { ObjectRef } from '@pothos/core';
import type { Context } from '../context.js';
import type { NodeType } from '../nodes/node-type.js';
import { builder, type BuilderTypes } from './builder.js';
import { CONNECTION_TYPE_EXTENSIONS } from './cost-directives-plugin.js';

/** The connection object of records of shape `T` named `<name>Connection`, `<name>Edge`. */
function makeConnection<T>(ref: ObjectRef<BuilderTypes, T>, name: string) {
  return builder.connectionObject(
    { type: ref, name: `${name}Connection`, extensions: CONNECTION_TYPE_EXTENSIONS },
    { name: `${name}Edge` },
  );
}

const refs = new Map<object, unknown>();
const connections = new Map<object, unknown>();

/**
 * The object type of a node type, made once from its declaration: every schema file that points
 * at it (a company's funding events, a funding event's company) asks for it here, so that no
 * list of refs has to be kept. Its shape is what an id is written from: the record, or less (a
 * funding event's investors are `{ id, name }` until a field asks for more).
 */
export function nodeRef<T extends { id: string }, H extends string, R extends { id: string }>(
  node: NodeType<T, H, R>,
): ObjectRef<BuilderTypes, R> {
  let ref = refs.get(node);
  if (!ref) refs.set(node, (ref = builder.objectRef<R>(node.typename)));
  return ref as ObjectRef<BuilderTypes, R>;
}

/** The one connection type of a node type, shared by its top-level list and the nested edges. */
export function nodeConnection<
  T extends { id: string },
  H extends string,
  R extends { id: string },
>(node: NodeType<T, H, R>): ReturnType<typeof makeConnection<R>> {
  let connection = connections.get(node);
  if (!connection) {
    connection = makeConnection(nodeRef(node), node.typename);
    connections.set(node, connection);
  }
  return connection as ReturnType<typeof makeConnection<R>>;
}

/**
 * The `id` and `loadWithoutCache` of `builder.node(nodeRef(node), ...)`, from the declaration:
 * the local id it writes and reads, and the refetch through the operation's record store. The
 * `id` field itself is written by the node-id plugin (`node-id-plugin.ts`), from the same
 * `localId`.
 */
export function nodeIdentity<T extends { id: string }, H extends string, R extends { id: string }>(
  node: NodeType<T, H, R>,
) {
  return {
    id: { resolve: (record: R) => node.localId(record) },
    loadWithoutCache: (id: string, { records }: Context) =>
      records.load(node as unknown as NodeType<T, H>, node.parseLocalId(id)),
  };
}
