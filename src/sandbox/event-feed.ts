import {
  acquisitionRecord,
  amountsFromCents,
  drawAcquirer,
  drawAnnouncedBefore,
  drawDealAmount,
  drawFundingAmount,
  drawInvestors,
  drawMoveType,
  drawOtherCompany,
  drawPerson,
  execMoveRecord,
  fundingRecord,
  investorPools,
  type EventTimes,
  type InvestorPools,
} from './dataset/generate-events.js';
import { createPrng, type Prng } from './dataset/prng.js';
import type {
  Acquisition,
  Company,
  Dataset,
  ExecMove,
  FundingEvent,
  Investor,
  InvestorRef,
  Person,
} from './dataset/records.js';
import { ROUNDS } from './dataset/vocab.js';
import type { EditableListEndpoint } from './list-endpoint.js';
import {
  EVENT_KINDS,
  parseNewEvents,
  type EventKind,
  type NewAcquisition,
  type NewEvent,
  type NewExecMove,
  type NewFundingEvent,
} from './parse-new-events.js';

/** An event record of any kind. */
export type LiveEvent = FundingEvent | ExecMove | Acquisition;

/** The three event lists, which take new records while they serve. */
export interface EventEndpoints {
  readonly fundingEvents: EditableListEndpoint<FundingEvent>;
  readonly execMoves: EditableListEndpoint<ExecMove>;
  readonly acquisitions: EditableListEndpoint<Acquisition>;
}

/** A new event with its ids looked up. */
type Resolved =
  | { readonly kind: 'fundingEvent'; readonly spec: NewFundingEvent; readonly company?: Company }
  | {
      readonly kind: 'execMove';
      readonly spec: NewExecMove;
      readonly company?: Company;
      readonly person?: Person;
    }
  | {
      readonly kind: 'acquisition';
      readonly spec: NewAcquisition;
      readonly acquirer?: Company;
      readonly target?: Company;
    };

/** Lookups over the seeded data, built on the first new event. */
interface Lookups {
  readonly companies: ReadonlyMap<string, Company>;
  readonly persons: ReadonlyMap<string, Person>;
  readonly investors: InvestorPools<Investor>;
  readonly refs: Map<Investor, InvestorRef>;
  /** The newest seeded discovery of each kind (ms; -Infinity for none). */
  readonly seededNewest: Readonly<Record<EventKind, number>>;
}

/** A deal is a megadeal this often: as in the seeded data (every 40th, and 1% more). */
const MEGADEAL_SHARE = 0.035;

function newestOf(events: readonly { readonly discoveredAt: string }[]): number {
  let newest = '';
  for (const event of events) if (event.discoveredAt > newest) newest = event.discoveredAt;
  return newest === '' ? -Infinity : Date.parse(newest);
}

/**
 * The events added to a running sandbox on top of its seeded data. Each is drawn as the seeded
 * ones are (a real company, person and investors of the dataset, plausible amounts and
 * sources), with the fields the caller fixes, and goes into its list endpoint at once, so every
 * filter, cursor and `since` sees it. `reset` takes them all out again.
 */
export class EventFeed {
  readonly #seeded: Dataset;
  readonly #seed: number;
  readonly #endpoints: EventEndpoints;
  #prng: Prng;
  #lookups: Lookups | null = null;
  #added: { fundingEvents: FundingEvent[]; execMoves: ExecMove[]; acquisitions: Acquisition[] } = {
    fundingEvents: [],
    execMoves: [],
    acquisitions: [],
  };
  #newest: Record<EventKind, number> | null = null;
  /** Each person's current company, after the seeded moves and the added ones. */
  #held: Map<Person, Company> | null = null;
  #data: Dataset | null = null;

  constructor(seeded: Dataset, seed: number, endpoints: EventEndpoints) {
    this.#seeded = seeded;
    this.#seed = seed;
    this.#endpoints = endpoints;
    this.#prng = createPrng(seed, 'added-events');
  }

  /** The seeded records plus the added ones (appended to their lists, in the order added). */
  get data(): Dataset {
    const added = this.#added;
    if (added.fundingEvents.length + added.execMoves.length + added.acquisitions.length === 0)
      return this.#seeded;
    const seeded = this.#seeded;
    this.#data ??= Object.freeze({
      ...seeded,
      fundingEvents: Object.freeze([...seeded.fundingEvents, ...added.fundingEvents]),
      execMoves: Object.freeze([...seeded.execMoves, ...added.execMoves]),
      acquisitions: Object.freeze([...seeded.acquisitions, ...added.acquisitions]),
    });
    return this.#data;
  }

  /** The kinds this dataset can make: events need two companies, moves a person too. */
  get kinds(): EventKind[] {
    const { companies, persons } = this.#seeded;
    return EVENT_KINDS.filter((kind) =>
      kind === 'execMove' ? companies.length >= 2 && persons.length >= 1 : companies.length >= 2,
    );
  }

  /**
   * Adds the events `input` describes (one new event or a list, as {@link parseNewEvents}
   * reads them), all or none, and returns the records in the order made.
   *
   * @throws RangeError naming the field at fault; nothing is added then.
   */
  add(input: unknown): LiveEvent[] {
    const list = parseNewEvents(input);
    const resolved = list.map((spec, i) =>
      this.#resolve(spec, Array.isArray(input) ? `[${i}].` : ''),
    );
    const made: LiveEvent[] = [];
    for (const item of resolved) {
      for (let n = 0; n < (item.spec.count ?? 1); n++) made.push(this.#make(item));
    }
    return made;
  }

  /** Adds one event of a kind drawn at random among {@link kinds}; null when there is none. */
  addRandom(): LiveEvent | null {
    const kinds = this.kinds;
    if (kinds.length === 0) return null;
    return this.add({ kind: this.#prng.pick(kinds) })[0] ?? null;
  }

  /** Takes every added event out of the lists; the next ones are drawn as after start. */
  reset(): void {
    const { fundingEvents, execMoves, acquisitions } = this.#endpoints;
    for (const event of this.#added.fundingEvents) fundingEvents.remove(event);
    for (const event of this.#added.execMoves) execMoves.remove(event);
    for (const event of this.#added.acquisitions) acquisitions.remove(event);
    this.#added = { fundingEvents: [], execMoves: [], acquisitions: [] };
    this.#newest = null;
    this.#held = null;
    this.#data = null;
    this.#prng = createPrng(this.#seed, 'added-events');
  }

  #lookup(): Lookups {
    if (this.#lookups) return this.#lookups;
    const data = this.#seeded;
    this.#lookups = {
      companies: new Map(data.companies.map((company) => [company.id, company])),
      persons: new Map(data.persons.map((person) => [person.id, person])),
      investors: investorPools(data.investors),
      refs: new Map(),
      seededNewest: {
        fundingEvent: newestOf(data.fundingEvents),
        execMove: newestOf(data.execMoves),
        acquisition: newestOf(data.acquisitions),
      },
    };
    return this.#lookups;
  }

  #resolve(spec: NewEvent, prefix: string): Resolved {
    if (!this.kinds.includes(spec.kind)) {
      throw new RangeError(
        `${prefix}kind: this sandbox cannot make a ${spec.kind} (it needs 2 companies${spec.kind === 'execMove' ? ' and a person' : ''})`,
      );
    }
    const { companies, persons } = this.#lookup();
    const company = (field: string, id: string | undefined): Company | undefined => {
      if (id === undefined) return undefined;
      const found = companies.get(id);
      if (!found) throw new RangeError(`${prefix}${field}: no company has the id ${id}`);
      return found;
    };
    switch (spec.kind) {
      case 'fundingEvent':
        return { kind: spec.kind, spec, company: company('companyId', spec.companyId) };
      case 'execMove': {
        const person = spec.personId === undefined ? undefined : persons.get(spec.personId);
        if (spec.personId !== undefined && !person)
          throw new RangeError(`${prefix}personId: no person has the id ${spec.personId}`);
        return { kind: spec.kind, spec, company: company('companyId', spec.companyId), person };
      }
      case 'acquisition': {
        const acquirerField = spec.acquirerId === undefined ? 'companyId' : 'acquirerId';
        const acquirer = company(acquirerField, spec.acquirerId ?? spec.companyId);
        const target = company('targetId', spec.targetId);
        if (acquirer && acquirer === target) {
          throw new RangeError(
            `${prefix}targetId must differ from the acquirer (${acquirerField}): a company does not acquire itself`,
          );
        }
        return { kind: spec.kind, spec, acquirer, target };
      }
    }
  }

  #make(item: Resolved): LiveEvent {
    this.#data = null;
    switch (item.kind) {
      case 'fundingEvent': {
        const record = this.#funding(item.spec, item.company);
        this.#endpoints.fundingEvents.insert(record);
        this.#added.fundingEvents.push(record);
        return record;
      }
      case 'execMove': {
        const record = this.#execMove(item.spec, item.company, item.person);
        this.#endpoints.execMoves.insert(record);
        this.#added.execMoves.push(record);
        return record;
      }
      case 'acquisition': {
        const record = this.#acquisition(item.spec, item.acquirer, item.target);
        this.#endpoints.acquisitions.insert(record);
        this.#added.acquisitions.push(record);
        return record;
      }
    }
  }

  /** Discovery (default: now, later than every event of the kind) and announcement. */
  #times(kind: EventKind, spec: NewEvent): EventTimes {
    this.#newest ??= { ...this.#lookup().seededNewest };
    const newest = this.#newest[kind];
    const discoveredAt =
      spec.discoveredAt === undefined
        ? Math.max(Date.now(), newest + 1)
        : Date.parse(spec.discoveredAt);
    this.#newest[kind] = Math.max(newest, discoveredAt);
    const announcedAt =
      typeof spec.announcedAt === 'string'
        ? Date.parse(spec.announcedAt)
        : drawAnnouncedBefore(this.#prng, discoveredAt);
    return { discoveredAt, announcedAt };
  }

  #funding(spec: NewFundingEvent, fixed?: Company): FundingEvent {
    const prng = this.#prng;
    const { investors, refs } = this.#lookup();
    const company = fixed ?? prng.pick(this.#seeded.companies);
    const round = spec.round ?? prng.weighted(ROUNDS);
    const times = this.#times('fundingEvent', spec);
    const amount =
      spec.amountUsdCents === undefined
        ? drawFundingAmount(prng, round)
        : spec.amountUsdCents === null
          ? null
          : amountsFromCents(prng, spec.amountUsdCents);
    const backers = drawInvestors(prng, round, investors).map((investor) => {
      let ref = refs.get(investor);
      if (!ref) {
        ref = Object.freeze({ id: investor.id, name: investor.name });
        refs.set(investor, ref);
      }
      return ref;
    });
    return fundingRecord(prng, { company, round, amount, investors: backers, times });
  }

  #heldCompanies(): Map<Person, Company> {
    if (this.#held) return this.#held;
    const held = new Map<Person, Company>();
    for (const move of [...this.#seeded.execMoves, ...this.#added.execMoves]) trackMove(held, move);
    this.#held = held;
    return held;
  }

  #execMove(spec: NewExecMove, fixedCompany?: Company, fixedPerson?: Person): ExecMove {
    const prng = this.#prng;
    const companies = this.#seeded.companies;
    const person = fixedPerson ?? drawPerson(prng, this.#seeded.persons);
    const heldCompanies = this.#heldCompanies();
    const held = heldCompanies.get(person);
    const moveType = spec.moveType ?? drawMoveType(prng, held);
    const joins = moveType === 'appointment' || moveType === 'transition';
    const company =
      fixedCompany ?? (joins || !held ? drawOtherCompany(prng, companies, held) : held);
    let fromCompany: Company | null = null;
    if (joins) {
      fromCompany =
        held && held !== company
          ? held
          : moveType === 'transition' || prng.chance(0.4)
            ? drawOtherCompany(prng, companies, company)
            : null;
    }
    const times = this.#times('execMove', spec);
    const record = execMoveRecord(prng, {
      person,
      company,
      fromCompany,
      moveType,
      times,
      roleSeniority: spec.roleSeniority,
      announcedAt:
        spec.announcedAt === undefined
          ? undefined
          : spec.announcedAt === null
            ? null
            : times.announcedAt,
    });
    trackMove(heldCompanies, record);
    return record;
  }

  #acquisition(spec: NewAcquisition, fixedAcquirer?: Company, fixedTarget?: Company): Acquisition {
    const prng = this.#prng;
    const companies = this.#seeded.companies;
    let acquirer = fixedAcquirer ?? drawAcquirer(prng, companies);
    if (!fixedAcquirer && acquirer === fixedTarget)
      acquirer = drawOtherCompany(prng, companies, fixedTarget);
    const target = fixedTarget ?? drawOtherCompany(prng, companies, acquirer);
    const times = this.#times('acquisition', spec);
    const amount =
      spec.dealAmountUsdCents === undefined
        ? drawDealAmount(prng, prng.chance(MEGADEAL_SHARE))
        : spec.dealAmountUsdCents === null
          ? null
          : amountsFromCents(prng, spec.dealAmountUsdCents);
    return acquisitionRecord(prng, {
      acquirer,
      target,
      amount,
      times,
      paymentType: spec.paymentType,
      isMerger: spec.isMerger,
    });
  }
}

/** A person's company after a move: joined, or none after a departure. */
function trackMove(held: Map<Person, Company>, move: ExecMove): void {
  if (move.moveType === 'departure') held.delete(move.person);
  else held.set(move.person, move.company);
}
