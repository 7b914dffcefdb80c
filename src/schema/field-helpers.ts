import { invalidArgument } from '../errors.js';

/** A list without its null items (they carry nothing), or null for a missing list. */
export function compact<T>(
  list: readonly (T | null | undefined)[] | null | undefined,
): readonly T[] | null {
  if (list == null) return null;
  if (!Array.isArray(list)) throw new TypeError(`expected a list, got ${typeof list}`);
  // Lists rarely hold nulls: hand the upstream's own array back rather than copy it.
  for (const item of list) if (item == null) return list.filter((i): i is T => i != null);
  return list as readonly T[];
}

/** The most ids `nodes(ids:)` takes, as GitHub's API bounds it: a list longer is refused. */
export const MAX_NODE_IDS = 100;

/** The keys a directory lookup (`company`, `investor`, `person`) takes exactly one of. */
export const LOOKUP_KEYS = ['id', 'uuid', 'domain'] as const;
export type LookupKey = (typeof LOOKUP_KEYS)[number];

/**
 * For lookup fields that take one of several keys: the one key given, as `[name, value]`.
 * Throws INVALID_INPUT naming the keys when none or several are given.
 */
export function exactlyOne<K extends string>(
  args: Partial<Record<K, unknown>>,
  names: readonly K[],
): [K, string] {
  const given = names.filter((name) => args[name] != null);
  if (given.length !== 1) {
    throw invalidArgument(
      given[1] ?? names[0]!,
      `pass exactly one of ${names.map((name) => `"${name}"`).join(', ')}`,
    );
  }
  const name = given[0]!;
  return [name, String(args[name])];
}
