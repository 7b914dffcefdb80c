import type { CursorPosition } from './cursor-codec.js';

/** A total order of a list's records by a two-part string key. */
export interface Ordering<R> {
  /** The record's sort key, also the cursor position of a page ending on it. */
  key(record: R): CursorPosition;
  /** Negative when `a` comes first in the list, positive when `b` does, 0 for equal keys. */
  compareKeys(a: CursorPosition, b: CursorPosition): number;
  /** `compareKeys` on two records, without building their keys. */
  compare(a: R, b: R): number;
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Event lists: `discoveredAt` descending (newest first), ties by `id` descending. */
export function eventOrdering<
  R extends { readonly discoveredAt: string; readonly id: string },
>(): Ordering<R> {
  return {
    key: (record) => [record.discoveredAt, record.id],
    compareKeys: (a, b) => cmp(b[0], a[0]) || cmp(b[1], a[1]),
    compare: (a, b) => cmp(b.discoveredAt, a.discoveredAt) || cmp(b.id, a.id),
  };
}

/** Directory lists: `name` ascending by UTF-16 code units, ties by `id` ascending. */
export function directoryOrdering<
  R extends { readonly name: string; readonly id: string },
>(): Ordering<R> {
  return {
    key: (record) => [record.name, record.id],
    compareKeys: (a, b) => cmp(a[0], b[0]) || cmp(a[1], b[1]),
    compare: (a, b) => cmp(a.name, b.name) || cmp(a.id, b.id),
  };
}

/** Sorts a copy of `records` into list order. */
export function sortRecords<R>(records: readonly R[], ordering: Ordering<R>): R[] {
  return [...records].sort(ordering.compare);
}

/** Index of the first record of a sorted list that comes strictly after `position` (binary search). */
export function indexAfter<R>(
  sorted: readonly R[],
  ordering: Ordering<R>,
  position: CursorPosition,
): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (ordering.compareKeys(ordering.key(sorted[mid] as R), position) <= 0) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** Puts `record` into a sorted list at its place (after any record with an equal key). */
export function insertSorted<R>(sorted: R[], ordering: Ordering<R>, record: R): void {
  const at =
    sorted.length === 0 || ordering.compare(record, sorted[0] as R) < 0
      ? 0
      : indexAfter(sorted, ordering, ordering.key(record));
  sorted.splice(at, 0, record);
}

/** Takes `record` (the very object) out of a sorted list; false when it is not there. */
export function removeSorted<R>(sorted: R[], ordering: Ordering<R>, record: R): boolean {
  let at = indexAfter(sorted, ordering, ordering.key(record)) - 1;
  while (at >= 0 && sorted[at] !== record && ordering.compare(sorted[at] as R, record) === 0) at--;
  if (at < 0 || sorted[at] !== record) return false;
  sorted.splice(at, 1);
  return true;
}
