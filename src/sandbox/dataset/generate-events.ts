import type {
  Acquisition,
  Company,
  ExecMove,
  FundingEvent,
  Investor,
  InvestorRef,
  Person,
  Source,
} from './records.js';
import type { Prng } from './prng.js';
import {
  CURRENCIES,
  EMPLOYEE_BUCKETS,
  MOVE_TYPES,
  NEWS_SITES,
  PAYMENT_TYPES,
  ROLE_TITLES,
  ROUNDS,
  ROUND_AMOUNTS,
  ROUND_INVESTOR_TYPES,
  SENIORITIES,
} from './vocab.js';
import {
  DAY,
  SPAN,
  type Mutable,
  type Frame,
  flat,
  iso,
  newId,
  roundAmount,
  logUniform,
} from './generation-kit.js';

const INVESTOR_COUNTS = [
  [0, 8],
  [1, 25],
  [2, 25],
  [3, 18],
  [4, 12],
  [5, 7],
  [6, 5],
] as const;
const SOURCE_COUNTS = [
  [1, 5],
  [2, 3],
  [3, 1],
] as const;

/** An event's discovery and announcement, in milliseconds since the Unix epoch. */
export interface EventTimes {
  readonly discoveredAt: number;
  readonly announcedAt: number;
}

function eventTimes(prng: Prng, frame: Frame, previous: number | undefined): EventTimes {
  const discoveredAt =
    previous !== undefined && prng.chance(0.08)
      ? previous
      : frame.epoch - Math.floor(prng.next() * SPAN);
  const announcedAt = prng.chance(0.05)
    ? discoveredAt + Math.floor(prng.next() * 5 * DAY)
    : drawAnnouncedBefore(prng, discoveredAt);
  return { discoveredAt, announcedAt };
}

/** An announcement before a discovery: the lag is exponential, two days on average. */
export function drawAnnouncedBefore(prng: Prng, discoveredAt: number): number {
  return discoveredAt - Math.floor(-Math.log(1 - prng.next()) * 2 * DAY);
}

function sources(prng: Prng, times: EventTimes, slug: string, ownSite: string): Source[] {
  const count = prng.weighted(SOURCE_COUNTS);
  const result: Source[] = [];
  const date = iso(times.announcedAt).slice(0, 10).replace(/-/g, '');
  const earliest = Math.min(times.announcedAt, times.discoveredAt);
  for (let s = 0; s < count; s++) {
    const site = s === 0 && prng.chance(0.4) ? ownSite : prng.pick(NEWS_SITES);
    const extractedAt = earliest + Math.floor(prng.next() * (times.discoveredAt - earliest + 1));
    result.push(
      Object.freeze({
        url: flat(`${site}/${date}-${slug}-${s + 1}`),
        extractedAt: iso(extractedAt),
      }),
    );
  }
  return result;
}

/** An amount in US dollars and in the currency it was announced in. */
export interface Amounts {
  readonly usdCents: number;
  readonly usd: number;
  readonly currency: string;
  readonly originalCents: number;
}

function amounts(prng: Prng, usdDollars: number): Amounts {
  const dollars = roundAmount(usdDollars);
  const usdCents = dollars * 100;
  const currency = prng.weighted(CURRENCIES);
  const originalCents =
    currency.minorDigits === 0
      ? Math.round(dollars / currency.usdPerUnit)
      : Math.round(usdCents / currency.usdPerUnit);
  return { usdCents, usd: dollars, currency: currency.code, originalCents };
}

/** The amounts of an exact sum in US cents, in a currency drawn as for generated events. */
export function amountsFromCents(prng: Prng, usdCents: number): Amounts {
  const currency = prng.weighted(CURRENCIES);
  const originalCents =
    currency.minorDigits === 0
      ? Math.round(usdCents / 100 / currency.usdPerUnit)
      : Math.round(usdCents / currency.usdPerUnit);
  return { usdCents, usd: usdCents / 100, currency: currency.code, originalCents };
}

/** Investors grouped for drawing the backers of a round. */
export interface InvestorPools<I extends { readonly type: string }> {
  readonly all: readonly I[];
  readonly byType: ReadonlyMap<string, readonly I[]>;
}

/** Groups investors by type, in the order given. */
export function investorPools<I extends { readonly type: string }>(
  investors: readonly I[],
): InvestorPools<I> {
  const byType = new Map<string, I[]>();
  for (const investor of investors) {
    const list = byType.get(investor.type) ?? [];
    list.push(investor);
    byType.set(investor.type, list);
  }
  return { all: investors, byType };
}

/** A round's amount, drawn from its typical range (7% undisclosed: null). */
export function drawFundingAmount(prng: Prng, round: string): Amounts | null {
  const [min, max] = ROUND_AMOUNTS[round] ?? [1_000_000, 10_000_000];
  return prng.chance(0.07) ? null : amounts(prng, logUniform(prng, min, max));
}

/** A round's backers: 0–6 distinct investors (0–1 for a grant) of the types that fund such rounds. */
export function drawInvestors<I extends { readonly type: string }>(
  prng: Prng,
  round: string,
  pools: InvestorPools<I>,
): I[] {
  const investors = pools.all;
  const investorCount =
    investors.length === 0
      ? 0
      : round === 'grant'
        ? prng.int(0, 1)
        : prng.weighted(INVESTOR_COUNTS);
  const chosen = new Set<I>();
  for (let attempt = 0; chosen.size < investorCount && attempt < investorCount * 4; attempt++) {
    const type = prng.weighted(ROUND_INVESTOR_TYPES[round] ?? [['vc', 1]]);
    const pool = pools.byType.get(type) ?? investors;
    chosen.add(prng.pick(pool.length > 0 ? pool : investors));
  }
  return [...chosen];
}

/** What a funding event is made of; the id and sources are drawn. */
export interface FundingParts {
  readonly company: Company;
  readonly round: string;
  readonly amount: Amounts | null;
  readonly investors: readonly InvestorRef[];
  readonly times: EventTimes;
}

/** A funding event record: draws its id and news sources. */
export function fundingRecord(prng: Prng, parts: FundingParts): FundingEvent {
  const { company, round, amount, times } = parts;
  return Object.freeze({
    id: newId(prng),
    company,
    round,
    amountUsdCents: amount?.usdCents ?? null,
    amountUsd: amount?.usd ?? null,
    amountOriginalCurrency: amount?.currency ?? null,
    amountOriginalCents: amount?.originalCents ?? null,
    investors: Object.freeze([...parts.investors]),
    announcedAt: iso(times.announcedAt),
    discoveredAt: iso(times.discoveredAt),
    sources: Object.freeze(
      sources(
        prng,
        times,
        `${company.domain.split('.')[0] ?? 'company'}-${round.replace('_', '-')}`,
        `https://${company.domain}/blog`,
      ),
    ),
  });
}

/** Funding events over real companies and investors; records each investor's first and last sighting on the drafts. */
export function generateFunding(
  frame: Frame,
  count: number,
  companies: readonly Company[],
  investors: Mutable<Investor>[],
): FundingEvent[] {
  const prng = frame.prngFor('funding-events');
  const pools = investorPools(investors);
  const seen = new Map<Mutable<Investor>, { first: number; last: number }>();
  const refsOf = new Map<Mutable<Investor>, InvestorRef>();
  for (const investor of investors)
    refsOf.set(investor, Object.freeze({ id: investor.id, name: investor.name }));
  const events: FundingEvent[] = [];
  let previous: number | undefined;
  for (let i = 0; i < count; i++) {
    const company = prng.pick(companies);
    const round = prng.weighted(ROUNDS);
    const times = eventTimes(prng, frame, previous);
    previous = times.discoveredAt;
    const amount = drawFundingAmount(prng, round);
    const refs: InvestorRef[] = [];
    for (const investor of drawInvestors(prng, round, pools)) {
      refs.push(refsOf.get(investor) as InvestorRef);
      const span = seen.get(investor);
      if (span) {
        span.first = Math.min(span.first, times.announcedAt);
        span.last = Math.max(span.last, times.discoveredAt);
      } else {
        seen.set(investor, { first: times.announcedAt, last: times.discoveredAt });
      }
    }
    events.push(fundingRecord(prng, { company, round, amount, investors: refs, times }));
  }
  const investorPrng = frame.prngFor('investor-activity');
  for (const [investor, span] of seen) {
    investor.firstSeenAt = investorPrng.chance(0.04) ? null : iso(span.first);
    investor.lastSeenAt = iso(span.last);
  }
  return events;
}

const BUCKET_RANK = new Map(EMPLOYEE_BUCKETS.map(([bucket], i) => [bucket, i]));

/** An acquirer: the largest (by employee bucket) of three companies drawn. */
export function drawAcquirer(prng: Prng, companies: readonly Company[]): Company {
  let acquirer = prng.pick(companies);
  for (let k = 0; k < 2; k++) {
    const other = prng.pick(companies);
    if (
      (BUCKET_RANK.get(other.employeeCountBucket) ?? 0) >
      (BUCKET_RANK.get(acquirer.employeeCountBucket) ?? 0)
    )
      acquirer = other;
  }
  return acquirer;
}

/** A company other than `other` (there must be two at least). */
export function drawOtherCompany(
  prng: Prng,
  companies: readonly Company[],
  other: Company | undefined,
): Company {
  let company = prng.pick(companies);
  while (company === other) company = prng.pick(companies);
  return company;
}

/** A deal's amount: $2M–$900M (30% undisclosed: null), or $1B–$40B for a megadeal (always disclosed). */
export function drawDealAmount(prng: Prng, megadeal: boolean): Amounts | null {
  return !megadeal && prng.chance(0.3)
    ? null
    : amounts(prng, megadeal ? logUniform(prng, 1e9, 4e10) : logUniform(prng, 2e6, 9e8));
}

/** What an acquisition is made of; the rest is drawn unless given. */
export interface AcquisitionParts {
  readonly acquirer: Company;
  readonly target: Company;
  readonly amount: Amounts | null;
  readonly times: EventTimes;
  readonly paymentType?: string | null;
  readonly isMerger?: boolean;
}

/** An acquisition record: draws whether it closed (and when), its id, the fields not given, and its sources. */
export function acquisitionRecord(prng: Prng, parts: AcquisitionParts): Acquisition {
  const { acquirer, target, amount, times } = parts;
  const closed = !prng.chance(0.25);
  return Object.freeze({
    id: newId(prng),
    acquirer,
    target,
    dealAmountUsdCents: amount?.usdCents ?? null,
    dealAmountUsd: amount?.usd ?? null,
    dealAmountOriginalCurrency: amount?.currency ?? null,
    dealAmountOriginalCents: amount?.originalCents ?? null,
    paymentType:
      parts.paymentType !== undefined
        ? parts.paymentType
        : prng.chance(0.06)
          ? null
          : prng.weighted(PAYMENT_TYPES),
    isMerger: parts.isMerger ?? prng.chance(0.08),
    announcedAt: iso(times.announcedAt),
    closingAt: closed ? iso(times.announcedAt + prng.int(20, 200) * DAY) : null,
    discoveredAt: iso(times.discoveredAt),
    sources: Object.freeze(
      sources(
        prng,
        times,
        `${acquirer.domain.split('.')[0] ?? 'a'}-acquires-${target.domain.split('.')[0] ?? 'b'}`,
        `https://${acquirer.domain}/press`,
      ),
    ),
  });
}

/** Acquisitions: acquirers lean to larger companies; every 40th deal (and 1% more) is a $1B–$40B megadeal. */
export function generateAcquisitions(
  frame: Frame,
  count: number,
  companies: readonly Company[],
): Acquisition[] {
  const prng = frame.prngFor('acquisitions');
  const events: Acquisition[] = [];
  let previous: number | undefined;
  for (let i = 0; i < count; i++) {
    const acquirer = drawAcquirer(prng, companies);
    const target = drawOtherCompany(prng, companies, acquirer);
    const times = eventTimes(prng, frame, previous);
    previous = times.discoveredAt;
    const megadeal = i % 40 === 1 || prng.chance(0.01);
    const amount = drawDealAmount(prng, megadeal);
    events.push(acquisitionRecord(prng, { acquirer, target, amount, times }));
  }
  return events;
}

/** What an executive move is made of; the rest is drawn unless given. */
export interface ExecMoveParts {
  readonly person: Person;
  readonly company: Company;
  readonly fromCompany: Company | null;
  readonly moveType: string;
  /** `times.announcedAt` dates the sources; the record's `announcedAt` is it (or null, 10%) unless given. */
  readonly times: EventTimes;
  readonly roleSeniority?: string;
  readonly announcedAt?: number | null;
}

/** An executive move record: draws the role, whether it was announced, its effective date, id and sources. */
export function execMoveRecord(prng: Prng, parts: ExecMoveParts): ExecMove {
  const { person, moveType, times: t } = parts;
  const roleSeniority = parts.roleSeniority ?? prng.weighted(SENIORITIES);
  const announced =
    parts.announcedAt !== undefined ? parts.announcedAt : prng.chance(0.1) ? null : t.announcedAt;
  const effective = prng.chance(0.15)
    ? null
    : Math.floor(((announced ?? t.discoveredAt) + prng.int(-20, 45) * DAY) / DAY) * DAY;
  return Object.freeze({
    id: newId(prng),
    person,
    company: parts.company,
    fromCompany: parts.fromCompany,
    role: prng.pick(ROLE_TITLES[roleSeniority] ?? ['Executive']),
    roleSeniority,
    moveType,
    announcedAt: announced === null ? null : iso(announced),
    effectiveDate: effective === null ? null : iso(effective),
    discoveredAt: iso(t.discoveredAt),
    sources: Object.freeze(
      sources(
        prng,
        t,
        `${person.linkedinHandle}-${moveType}`,
        `https://www.linkedin.com/posts/${person.linkedinHandle}`,
      ),
    ),
  });
}

/** A mover: 40% from the most active 15% of persons, else anyone. */
export function drawPerson(prng: Prng, persons: readonly Person[]): Person {
  const frequent = Math.max(1, Math.floor(persons.length * 0.15));
  return prng.chance(0.4) ? (persons[prng.int(0, frequent - 1)] as Person) : prng.pick(persons);
}

/** A move's type; a person who holds no position is appointed (never promoted or departing). */
export function drawMoveType(prng: Prng, held: Company | undefined): string {
  const moveType = prng.weighted(MOVE_TYPES);
  return !held && (moveType === 'promotion' || moveType === 'departure') ? 'appointment' : moveType;
}

/** Executive moves in discovery order, tracking each person's current company so moves chain plausibly. */
export function generateExecMoves(
  frame: Frame,
  count: number,
  companies: readonly Company[],
  persons: readonly Person[],
): ExecMove[] {
  const prng = frame.prngFor('exec-moves');
  const times: EventTimes[] = [];
  let previous: number | undefined;
  for (let i = 0; i < count; i++) {
    const t = eventTimes(prng, frame, previous);
    times.push(t);
    previous = t.discoveredAt;
  }
  times.sort((a, b) => a.discoveredAt - b.discoveredAt);
  const current = new Map<Person, Company>();
  const moves: ExecMove[] = [];
  for (const t of times) {
    const person = drawPerson(prng, persons);
    const held = current.get(person);
    const moveType = drawMoveType(prng, held);
    let company: Company;
    let fromCompany: Company | null = null;
    if (moveType === 'appointment' || moveType === 'transition') {
      company = drawOtherCompany(prng, companies, held);
      fromCompany =
        held ??
        (moveType === 'transition' || prng.chance(0.4)
          ? drawOtherCompany(prng, companies, company)
          : null);
      current.set(person, company);
    } else {
      company = held as Company;
      if (moveType === 'departure') current.delete(person);
    }
    moves.push(execMoveRecord(prng, { person, company, fromCompany, moveType, times: t }));
  }
  return moves;
}
