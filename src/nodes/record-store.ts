import type { UpstreamRecord } from '../upstream/types.js';
import { isRecord } from '../upstream/types.js';
import type { PageListener } from '../upstream/policies/on-page.js';
import type { UpstreamSession } from '../upstream/upstream-session.js';
import { EntityLoader } from './entity-loader.js';
import type { NodeId, NodeType, OperationRecords, Prime } from './node-type.js';
import { nodeListedBy } from './node-types.js';

/**
 * The records one operation has seen, by node type, and its lookups by id. Every page the
 * session receives is remembered with the records it embeds (a funding event's company, an
 * executive move's person...), so a lookup of any of them costs nothing: {@link remember} is the
 * session's page listener. Made per operation.
 */
export class RecordStore implements OperationRecords {
  readonly #session: UpstreamSession;
  /** One loader per node type, made on first use; each entry's types are those of its key. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly #loaders = new Map<NodeType<any, any>, EntityLoader<any, any>>();
  /** The node type of every record primed; the records themselves stay frozen and shared. */
  readonly #typenames = new WeakMap<object, string>();

  constructor(session: UpstreamSession) {
    this.#session = session;
  }

  /** Remembers the records of a page the session received, and those they embed. */
  readonly remember: PageListener = (endpoint, data) => {
    const node = nodeListedBy[endpoint];
    for (const record of data) this.prime(node as NodeType<UpstreamRecord>, record);
  };

  /** The record of `node` with this id, from memory or looked up; null when none matches. */
  load<T extends { id: string }, H extends string>(
    node: NodeType<T, H>,
    id: NodeId<H>,
  ): Promise<T | null> | T {
    return this.#loader(node).load(id);
  }

  /**
   * The node type of a record this operation received: the one whose loader holds it. Cached
   * pages are frozen and shared between operations, so a record carries no mark of its type;
   * `Node` and `_Entity` resolve it here instead. Null for an object no page carried.
   */
  typenameOf(record: unknown): string | null {
    return (typeof record === 'object' && record !== null && this.#typenames.get(record)) || null;
  }

  /** Remembers `record` and the records it embeds; ignores null and malformed items. */
  readonly prime: Prime = (node, record) => {
    if (!isRecord(record)) return;
    this.#typenames.set(record, node.typename);
    this.#loader(node).prime(record);
    node.embeds(record, this.prime);
  };

  #loader<T extends { id: string }, H extends string>(
    node: NodeType<T, H>,
  ): EntityLoader<T, NodeId<H>> {
    let loader = this.#loaders.get(node);
    if (!loader) {
      const session = this.#session;
      loader = new EntityLoader<T, NodeId<H>>(
        (id) => node.find(session, id),
        () => session.settled(),
      );
      this.#loaders.set(node, loader);
    }
    return loader;
  }
}
