import DataLoader from 'dataloader';

/**
 * Finds records of one node type by id for one operation: a record any upstream response already
 * carried is served from memory; the rest are looked up once per id, concurrently within a tick.
 */
export class EntityLoader<T extends { id: string }, I extends { uuid: string }> {
  readonly #seen = new Map<string, T>();
  readonly #find: (id: I) => Promise<T | null>;
  readonly #settled: () => Promise<void>;
  #loader: DataLoader<I, T | null, string> | undefined;

  /**
   * @param find looks one record up upstream.
   * @param settled resolves when the requests in flight have landed; a lookup waits for them
   *   first, since a response already under way often carries the record (a credit saved).
   */
  constructor(find: (id: I) => Promise<T | null>, settled: () => Promise<void>) {
    this.#find = find;
    this.#settled = settled;
  }

  /** Remembers a record seen in a response, so a later `load` of its id costs nothing. */
  prime(record: T): void {
    this.#seen.set(record.id, record);
  }

  /** The record with this id, or null when the upstream has none. */
  load(id: I): Promise<T | null> | T {
    return this.#seen.get(id.uuid) ?? this.#dataLoader().load(id);
  }

  /** Made on the first lookup only: most operations never look anything up by id. */
  #dataLoader() {
    this.#loader ??= new DataLoader(
      async (ids) => {
        await this.#settled();
        return Promise.all(
          ids.map((id) => this.#seen.get(id.uuid) ?? this.#find(id).catch((error: Error) => error)),
        );
      },
      { cacheKeyFn: (id) => id.uuid },
    );
    return this.#loader;
  }
}
