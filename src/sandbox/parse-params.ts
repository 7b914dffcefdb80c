import { ApiError, quote } from './api-error.js';
import { parseTimestamp } from './parse-timestamp.js';

/**
 * How one query parameter is read. `list` parameters take repeated keys (and,
 * with `commaSeparated`, comma-separated values too); all others must appear
 * at most once.
 */
export type ParamRule =
  | { readonly kind: 'string' }
  | { readonly kind: 'uuid' }
  | { readonly kind: 'timestamp' }
  | { readonly kind: 'amount' }
  | { readonly kind: 'year' }
  | { readonly kind: 'boolean' }
  | { readonly kind: 'list'; readonly commaSeparated?: boolean };

/** A parsed value: strings (UUIDs lower-cased, timestamps normalized), numbers, booleans, or a de-duplicated list. */
export type ParamValue = string | number | boolean | readonly string[];

/** Parsed filter values by parameter name; absent parameters are missing. */
export type ParamValues = Readonly<Record<string, ParamValue>>;

/** The outcome of reading a list request's query string. */
export interface ParsedQuery {
  readonly limit: number;
  readonly cursor: string | null;
  readonly values: ParamValues;
  /** A canonical text of every parameter but cursor and limit: equal for equal filters. */
  readonly canonical: string;
}

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const INTEGER = /^[+-]?\d+$/;

const invalid = (message: string): ApiError => new ApiError('INVALID_INPUT', message);

function parseScalar(name: string, rule: ParamRule, raw: string): ParamValue {
  switch (rule.kind) {
    case 'string':
      return raw;
    case 'uuid':
      if (!UUID.test(raw)) throw invalid(`${name} must be a UUID (got ${quote(raw)})`);
      return raw.toLowerCase();
    case 'timestamp': {
      const ts = parseTimestamp(raw);
      if (ts === null) {
        throw invalid(
          `${name} must be an ISO-8601 timestamp such as 2024-01-02T03:04:05.678Z (got ${quote(raw)})`,
        );
      }
      return ts;
    }
    case 'amount': {
      const n = Number(raw);
      if (!DECIMAL.test(raw) || !Number.isFinite(n))
        throw invalid(`${name} must be a number (got ${quote(raw)})`);
      if (n < 0) throw invalid(`${name} must be a number >= 0 (got ${quote(raw)})`);
      return n;
    }
    case 'year': {
      const n = Number(raw);
      if (!INTEGER.test(raw) || !Number.isSafeInteger(n))
        throw invalid(`${name} must be an integer (got ${quote(raw)})`);
      if (n < 0) throw invalid(`${name} must be an integer >= 0 (got ${quote(raw)})`);
      return n;
    }
    case 'boolean':
      if (raw !== 'true' && raw !== 'false')
        throw invalid(`${name} must be true or false (got ${quote(raw)})`);
      return raw === 'true';
    case 'list':
      return [raw];
  }
}

function parseLimit(raws: readonly string[]): number {
  if (raws.length === 0) return DEFAULT_LIMIT;
  if (raws.length > 1) throw invalid('limit must be given at most once');
  const raw = raws[0] as string;
  const n = Number(raw);
  if (!INTEGER.test(raw) || n < 1 || n > MAX_LIMIT) {
    throw invalid(`limit must be an integer between 1 and ${MAX_LIMIT} (got ${quote(raw)})`);
  }
  return n;
}

/**
 * Reads a list request's query string against the endpoint's rules (which must
 * not include cursor and limit: those are common to every endpoint).
 *
 * @throws ApiError INVALID_INPUT naming the first parameter that breaks its
 *   rule: unknown names, empty values, repeated scalar keys, bad formats.
 */
export function parseParams(
  query: URLSearchParams,
  rules: Readonly<Record<string, ParamRule>>,
): ParsedQuery {
  const grouped = new Map<string, string[]>();
  for (const [name, value] of query) {
    const list = grouped.get(name);
    if (list) list.push(value);
    else grouped.set(name, [value]);
  }
  const unknown = [...grouped.keys()].filter(
    (name) => name !== 'cursor' && name !== 'limit' && !(name in rules),
  );
  if (unknown.length > 0) {
    const names = unknown.map((name) => quote(name)).join(', ');
    const allowed = ['cursor', 'limit', ...Object.keys(rules)].join(', ');
    throw invalid(
      `unknown parameter${unknown.length > 1 ? 's' : ''} ${names} (allowed: ${allowed})`,
    );
  }
  const limit = parseLimit(grouped.get('limit') ?? []);
  const cursors = grouped.get('cursor') ?? [];
  if (cursors.length > 1) throw invalid('cursor must be given at most once');
  const cursor = cursors[0] ?? null;
  if (cursor === '') throw invalid('cursor must not be empty');

  const values: Record<string, ParamValue> = {};
  const canonical: [string, ParamValue][] = [];
  for (const [name, rule] of Object.entries(rules)) {
    const raws = grouped.get(name);
    if (!raws) continue;
    if (rule.kind === 'list') {
      const items = new Set<string>();
      for (const raw of raws) {
        const parts = rule.commaSeparated ? raw.split(',').map((part) => part.trim()) : [raw];
        for (const part of parts) if (part !== '') items.add(part);
      }
      if (items.size === 0) throw invalid(`${name} must not be empty`);
      const list = [...items].sort();
      values[name] = list;
      canonical.push([name, list]);
      continue;
    }
    if (raws.length > 1)
      throw invalid(`${name} must be given at most once (got ${raws.length} values)`);
    const raw = raws[0] as string;
    if (raw === '') throw invalid(`${name} must not be empty`);
    const value = parseScalar(name, rule, raw);
    values[name] = value;
    canonical.push([name, value]);
  }
  canonical.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return { limit, cursor, values, canonical: JSON.stringify(canonical) };
}
