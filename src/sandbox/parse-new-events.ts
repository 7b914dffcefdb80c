import { quote } from './api-error.js';
import { parseTimestamp } from './parse-timestamp.js';

/** The kinds of events a running sandbox can be given. */
export type EventKind = 'fundingEvent' | 'execMove' | 'acquisition';

export const EVENT_KINDS: readonly EventKind[] = ['fundingEvent', 'execMove', 'acquisition'];

/** The most events one call may add. */
export const MAX_NEW_EVENTS = 1000;

/**
 * What every new event may fix. A field left out is drawn as for the seeded events; ids must be
 * those of the sandbox's own companies and persons.
 */
interface NewEventBase {
  /** How many events to add with these fields, each drawn anew (1..1000, default 1). */
  readonly count?: number;
  /**
   * ISO-8601 timestamp (stored at millisecond precision, UTC). Default: now, or 1 ms after the
   * newest event of the kind if that is later, so that the new event comes first in its list.
   */
  readonly discoveredAt?: string;
  /** ISO-8601 timestamp. Default: up to a few days before `discoveredAt`. */
  readonly announcedAt?: string;
}

/** A funding event to add. `country` and `industryGroup` follow from the company. */
export interface NewFundingEvent extends NewEventBase {
  readonly kind: 'fundingEvent';
  readonly companyId?: string;
  readonly round?: string;
  /** The amount in US cents (the other amount fields follow), or null for an undisclosed one. */
  readonly amountUsdCents?: number | null;
}

/** An executive move to add. */
export interface NewExecMove extends Omit<NewEventBase, 'announcedAt'> {
  readonly kind: 'execMove';
  /** ISO-8601 timestamp, or null: not announced. */
  readonly announcedAt?: string | null;
  /** The company the person joins (or is promoted in, or leaves). */
  readonly companyId?: string;
  readonly personId?: string;
  readonly roleSeniority?: string;
  readonly moveType?: string;
}

/** An acquisition to add. */
export interface NewAcquisition extends NewEventBase {
  readonly kind: 'acquisition';
  /** The acquirer: the same as `acquirerId` (the `companyId` filter matches acquirer or target). */
  readonly companyId?: string;
  readonly acquirerId?: string;
  readonly targetId?: string;
  readonly paymentType?: string | null;
  readonly isMerger?: boolean;
  /** The deal's amount in US cents (the other amount fields follow), or null for an undisclosed one. */
  readonly dealAmountUsdCents?: number | null;
}

/** One entry of `addEvents` or of the body of `POST /__sandbox/events`. */
export type NewEvent = NewFundingEvent | NewExecMove | NewAcquisition;

type Check = (value: unknown, field: string) => unknown;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const shown = (value: unknown): string =>
  typeof value === 'string' ? quote(value) : (JSON.stringify(value) ?? String(value));

const fail = (field: string, rule: string, value: unknown): never => {
  throw new RangeError(`${field} must be ${rule} (got ${shown(value)})`);
};

const timestamp =
  (nullable: boolean): Check =>
  (value, field) => {
    if (value === null && nullable) return null;
    const parsed = typeof value === 'string' ? parseTimestamp(value) : null;
    return (
      parsed ??
      fail(
        field,
        `an ISO-8601 timestamp such as 2025-07-01T12:00:00.000Z${nullable ? ', or null' : ''}`,
        value,
      )
    );
  };

const uuid: Check = (value, field) =>
  typeof value === 'string' && UUID.test(value)
    ? value.toLowerCase()
    : fail(field, 'a UUID', value);

const text =
  (nullable: boolean): Check =>
  (value, field) => {
    if (value === null && nullable) return null;
    return typeof value === 'string' && value.trim() !== ''
      ? value
      : fail(field, `a non-empty string${nullable ? ', or null' : ''}`, value);
  };

const cents: Check = (value, field) =>
  value === null || (Number.isSafeInteger(value) && (value as number) >= 0)
    ? value
    : fail(field, 'an integer number of cents >= 0, or null', value);

const bool: Check = (value, field) =>
  typeof value === 'boolean' ? value : fail(field, 'true or false', value);

const count: Check = (value, field) =>
  Number.isInteger(value) && (value as number) >= 1 && (value as number) <= MAX_NEW_EVENTS
    ? value
    : fail(field, `an integer from 1 to ${MAX_NEW_EVENTS}`, value);

const COMMON: Readonly<Record<string, Check>> = {
  count,
  discoveredAt: timestamp(false),
  announcedAt: timestamp(false),
  companyId: uuid,
};

const FIELDS: Readonly<Record<EventKind, Readonly<Record<string, Check>>>> = {
  fundingEvent: { ...COMMON, round: text(false), amountUsdCents: cents },
  execMove: {
    ...COMMON,
    announcedAt: timestamp(true),
    personId: uuid,
    roleSeniority: text(false),
    moveType: text(false),
  },
  acquisition: {
    ...COMMON,
    acquirerId: uuid,
    targetId: uuid,
    paymentType: text(true),
    isMerger: bool,
    dealAmountUsdCents: cents,
  },
};

function parseOne(input: unknown, prefix: string): NewEvent {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new RangeError(
      `${prefix || 'the body'} must be an object such as {"kind":"fundingEvent"} (got ${shown(input)})`,
    );
  }
  const record = input as Record<string, unknown>;
  const kind = record.kind;
  if (!EVENT_KINDS.includes(kind as EventKind)) fail(`${prefix}kind`, EVENT_KINDS.join(', '), kind);
  const fields = FIELDS[kind as EventKind];
  const result: Record<string, unknown> = { kind };
  for (const [name, value] of Object.entries(record)) {
    if (name === 'kind' || value === undefined) continue;
    const check = fields[name];
    if (!check) {
      throw new RangeError(
        `${prefix}${name} is not a field of a new ${String(kind)} (allowed: kind, ${Object.keys(fields).join(', ')})`,
      );
    }
    result[name] = check(value, `${prefix}${name}`);
  }
  if (result.companyId !== undefined && result.acquirerId !== undefined) {
    throw new RangeError(
      `${prefix}companyId and ${prefix}acquirerId both name the acquirer: give one of them`,
    );
  }
  return result as unknown as NewEvent;
}

/**
 * Checks new events given to `addEvents` or posted to `/__sandbox/events`: one object or a
 * list of them. UUIDs come back lower-cased, timestamps normalized (`2025-07-01T12:00:00.000Z`).
 *
 * @throws RangeError naming the first field that breaks its rule (`[2].round` in a list):
 *   unknown fields, fields of another kind, wrong types, bad timestamps, ids that are not UUIDs,
 *   or more than 1000 events in all.
 */
export function parseNewEvents(input: unknown): NewEvent[] {
  const list = Array.isArray(input)
    ? input.map((item, i) => parseOne(item, `[${i}].`))
    : [parseOne(input, '')];
  if (list.length === 0) throw new RangeError('the list of new events is empty');
  const total = list.reduce((sum, event) => sum + (event.count ?? 1), 0);
  if (total > MAX_NEW_EVENTS) {
    throw new RangeError(`count must add up to at most ${MAX_NEW_EVENTS} events (got ${total})`);
  }
  return list;
}
