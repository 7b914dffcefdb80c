import { invalidArgument } from '../errors.js';

/** A list without its null items (they carry nothing), or null for a missing list. */
export function compact<T>(list: readonly (T | null | undefined)[] | null | undefined): T[] | null {
  return list ? list.filter((item): item is T => item != null) : null;
}

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
