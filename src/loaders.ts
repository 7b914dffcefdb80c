import DataLoader from 'dataloader';
import type { LocalId } from './global-id.js';
import {
  findAcquisition,
  findCompany,
  findExecMove,
  findFundingEvent,
  findInvestor,
  findPerson,
} from './lookups.js';
import type { EndpointName, EndpointRecords } from './upstream/endpoints.js';
import type {
  AcquisitionRecord,
  CompanyRecord,
  ExecMoveRecord,
  FundingEventRecord,
  InvestorRecord,
  PersonRecord,
} from './upstream/types.js';
import type { UpstreamSession } from './upstream/upstream-session.js';

/**
 * Finds records by id for one operation: a record any upstream response already carried is
 * served from memory; the rest are looked up once per id, concurrently within a tick.
 */
export class EntityLoader<T extends { id: string }> {
  readonly #seen = new Map<string, T>();
  #loader: DataLoader<LocalId, T | null, string> | undefined;

  /**
   * @param find looks one record up upstream.
   * @param settled resolves when the requests in flight have landed; a lookup waits for them
   *   first, since a response already under way often carries the record (a credit saved).
   */
  constructor(
    private readonly find: (id: LocalId) => Promise<T | null>,
    private readonly settled: () => Promise<void>,
  ) {}

  /** Remembers a record seen in a response, so a later `load` of its id costs nothing. */
  prime(record: T | null | undefined) {
    if (record && typeof record.id === 'string') this.#seen.set(record.id, record);
  }

  /** The record with this id, or null when the upstream has none. */
  load(id: LocalId): Promise<T | null> | T {
    return this.#seen.get(id.uuid) ?? this.#dataLoader().load(id);
  }

  /** Made on the first lookup only: most operations never look anything up by id. */
  #dataLoader() {
    this.#loader ??= new DataLoader(
      async (ids) => {
        await this.settled();
        return Promise.all(
          ids.map((id) => this.#seen.get(id.uuid) ?? this.find(id).catch((error: Error) => error)),
        );
      },
      { cacheKeyFn: (id) => id.uuid },
    );
    return this.#loader;
  }
}

/** The per-operation loaders, one per node type. */
export interface Loaders {
  company: EntityLoader<CompanyRecord>;
  investor: EntityLoader<InvestorRecord>;
  person: EntityLoader<PersonRecord>;
  execMove: EntityLoader<ExecMoveRecord>;
  acquisition: EntityLoader<AcquisitionRecord>;
  fundingEvent: EntityLoader<FundingEventRecord>;
}

/** Makes the loaders of one operation; never share them between operations. */
export function createLoaders(session: () => UpstreamSession): Loaders {
  const settled = () => session().settled();
  return {
    company: new EntityLoader((id) => findCompany(session(), id), settled),
    investor: new EntityLoader((id) => findInvestor(session(), id), settled),
    person: new EntityLoader((id) => findPerson(session(), id), settled),
    execMove: new EntityLoader((id) => findExecMove(session(), id), settled),
    acquisition: new EntityLoader((id) => findAcquisition(session(), id), settled),
    fundingEvent: new EntityLoader((id) => findFundingEvent(session(), id), settled),
  };
}

/** Primes the loaders with every record a page carries, embedded ones included. */
export function primeLoaders<E extends EndpointName>(
  loaders: Loaders,
  endpoint: E,
  records: readonly EndpointRecords[E][],
) {
  switch (endpoint) {
    case 'companies':
      for (const c of records as readonly CompanyRecord[]) loaders.company.prime(c);
      break;
    case 'investors':
      for (const i of records as readonly InvestorRecord[]) loaders.investor.prime(i);
      break;
    case 'execMoves':
      for (const m of records as readonly ExecMoveRecord[]) {
        loaders.execMove.prime(m);
        loaders.person.prime(m.person);
        loaders.company.prime(m.company);
        loaders.company.prime(m.fromCompany);
      }
      break;
    case 'acquisitions':
      for (const a of records as readonly AcquisitionRecord[]) {
        loaders.acquisition.prime(a);
        loaders.company.prime(a.acquirer);
        loaders.company.prime(a.target);
      }
      break;
    case 'fundingEvents':
      for (const f of records as readonly FundingEventRecord[]) {
        loaders.fundingEvent.prime(f);
        loaders.company.prime(f.company);
      }
      break;
  }
}
