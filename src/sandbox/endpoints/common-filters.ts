import { ApiError } from '../api-error.js';
import type { Country } from '../dataset/records.js';
import { slugify } from '../dataset/slugify.js';
import type { FilterDef } from '../list-endpoint.js';
import type { ParamValue } from '../parse-params.js';

/*
 * Building blocks for the endpoint tables. Parsed timestamps are normalized
 * ISO strings, so bounds compare as plain strings.
 */

interface EventTimes {
  readonly discoveredAt: string;
  readonly announcedAt: string | null;
}

interface DirectoryTimes {
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** Above every id: a position `[t, ID_CEILING]` comes before every event discovered at `t` (ids descend). */
const ID_CEILING = '\uffff';

/**
 * Events discovered or announced strictly after the bound (a null announcedAt never matches).
 * For a list in event order (discoveredAt descending): it keeps the longest time any event was
 * announced after its discovery (`lead`), so an event discovered at or before `bound - lead`
 * cannot pass and the walk stops there. An event added with a late announcement moves that
 * fence; one removed leaves it where it was, still true.
 */
export function eventSince<R extends EventTimes>(): FilterDef<R> {
  let lead = 0;
  return {
    rule: { kind: 'timestamp' },
    predicate: (value) => (r) =>
      r.discoveredAt > (value as string) ||
      (r.announcedAt !== null && r.announcedAt > (value as string)),
    fence: {
      observe(r) {
        if (r.announcedAt !== null && r.announcedAt > r.discoveredAt)
          lead = Math.max(lead, Date.parse(r.announcedAt) - Date.parse(r.discoveredAt));
      },
      after(value) {
        const fence = new Date(Date.parse(value as string) - lead);
        return Number.isNaN(fence.getTime()) ? null : [fence.toISOString(), ID_CEILING];
      },
    },
  };
}

/** Events discovered or announced strictly before the bound (a null announcedAt never matches). */
export function eventUntil<R extends EventTimes>(): FilterDef<R> {
  return {
    rule: { kind: 'timestamp' },
    predicate: (value) => (r) =>
      r.discoveredAt < (value as string) ||
      (r.announcedAt !== null && r.announcedAt < (value as string)),
  };
}

/** Directory records created or updated strictly after the bound. */
export function directorySince<R extends DirectoryTimes>(): FilterDef<R> {
  return {
    rule: { kind: 'timestamp' },
    predicate: (value) => (r) => r.createdAt > (value as string) || r.updatedAt > (value as string),
  };
}

/** Repeated-key list filter: the field equals one of the values exactly (null never matches). */
export function oneOf<R>(field: (r: R) => string | null, commaSeparated = false): FilterDef<R> {
  return {
    rule: { kind: 'list', commaSeparated },
    predicate: (value) => {
      const wanted = new Set(value as readonly string[]);
      return (r) => {
        const v = field(r);
        return v !== null && wanted.has(v);
      };
    },
    index: {
      keys: (r) => {
        const v = field(r);
        return v === null ? [] : [v];
      },
      lookup: (value) => {
        const list = value as readonly string[];
        return list.length === 1 ? list[0] : undefined;
      },
    },
  };
}

/** Single-value exact match; `normalize` is applied to both sides (e.g. case folding). */
export function exact<R>(
  field: (r: R) => string | null,
  normalize: (s: string) => string = (s) => s,
): FilterDef<R> {
  return {
    rule: { kind: 'string' },
    predicate: (value) => {
      const wanted = normalize(value as string);
      return (r) => {
        const v = field(r);
        return v !== null && normalize(v) === wanted;
      };
    },
    index: {
      keys: (r) => {
        const v = field(r);
        return v === null ? [] : [normalize(v)];
      },
      lookup: (value) => normalize(value as string),
    },
  };
}

/** Headquarters country code, compared case-insensitively (null country never matches). */
export function countryCode<R>(country: (r: R) => Country | null): FilterDef<R> {
  return exact(
    (r) => country(r)?.code ?? null,
    (s) => s.toUpperCase(),
  );
}

/** UUID filter matching any of the record's ids (ids are lower-case, so is the parsed value). */
export function idIn<R>(ids: (r: R) => readonly string[]): FilterDef<R> {
  return {
    rule: { kind: 'uuid' },
    predicate: (value) => (r) => ids(r).includes(value as string),
    index: { keys: ids, lookup: (value) => value as string },
  };
}

/** Inclusive bound in US dollars on an amount in cents (null amounts never match). */
export function amountBound<R>(cents: (r: R) => number | null, side: 'min' | 'max'): FilterDef<R> {
  return {
    rule: { kind: 'amount' },
    predicate: (value) => {
      const bound = value as number;
      return side === 'min'
        ? (r) => {
            const c = cents(r);
            return c !== null && c / 100 >= bound;
          }
        : (r) => {
            const c = cents(r);
            return c !== null && c / 100 <= bound;
          };
    },
  };
}

/** Inclusive bound on an integer field (null never matches). */
export function integerBound<R>(field: (r: R) => number | null, side: 'min' | 'max'): FilterDef<R> {
  return {
    rule: { kind: 'year' },
    predicate: (value) => {
      const bound = value as number;
      return side === 'min'
        ? (r) => {
            const v = field(r);
            return v !== null && v >= bound;
          }
        : (r) => {
            const v = field(r);
            return v !== null && v <= bound;
          };
    },
  };
}

/** Boolean equality filter. */
export function flag<R>(field: (r: R) => boolean): FilterDef<R> {
  return {
    rule: { kind: 'boolean' },
    predicate: (value) => (r) => field(r) === value,
    index: { keys: (r) => [String(field(r))], lookup: (value: ParamValue) => String(value) },
  };
}

const fold = (text: string): string => slugify(text, ' ');

/**
 * Keyword search: the value is split on whitespace and every keyword must occur,
 * case- and accent-insensitively, as a substring of one of the record's fields.
 */
export function keywordSearch<R>(fields: (r: R) => readonly (string | null)[]): FilterDef<R> {
  const haystacks = new Map<R, string>();
  const haystack = (r: R): string => {
    let text = haystacks.get(r);
    if (text === undefined) {
      const lower = fields(r)
        .filter((f): f is string => f !== null)
        .join('\n')
        .toLowerCase();
      text = `${lower}\n${fold(lower)}`;
      haystacks.set(r, text);
    }
    return text;
  };
  return {
    rule: { kind: 'string' },
    predicate: (value) => {
      const keywords = (value as string).toLowerCase().split(/\s+/).filter(Boolean);
      if (keywords.length === 0)
        throw new ApiError('INVALID_INPUT', 'search must contain at least one keyword');
      const folded = keywords.map(fold);
      return (r) => {
        const text = haystack(r);
        return keywords.every(
          (k, i) =>
            text.includes(k) ||
            ((folded[i] as string) !== '' && text.includes(folded[i] as string)),
        );
      };
    },
  };
}
