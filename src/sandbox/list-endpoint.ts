import type { CursorPosition } from './cursor-codec.js';
import { indexAfter, insertSorted, removeSorted, sortRecords, type Ordering } from './ordering.js';
import type { ParamRule, ParamValue, ParamValues } from './parse-params.js';

/** One filter parameter of a list endpoint. */
export interface FilterDef<R> {
  readonly rule: ParamRule;
  /** The test a record must pass for the parsed value. */
  predicate(value: ParamValue): (record: R) => boolean;
  /**
   * Optional index: the keys a record is found under, and the single key a
   * parsed value selects (undefined when the value cannot use the index, e.g.
   * a list of several values). Records not under the key must fail the predicate.
   */
  readonly index?: {
    keys(record: R): readonly string[];
    lookup(value: ParamValue): string | undefined;
  };
  /**
   * Optional end of the walk, for a filter only records near the start of the
   * list can pass (`since` on events): `after(value)` is a position such that
   * every record strictly after it in list order fails the predicate (null when
   * there is none). `observe` sees every record the list takes, at build and on
   * insert, to keep that true.
   */
  readonly fence?: {
    observe(record: R): void;
    after(value: ParamValue): CursorPosition | null;
  };
}

/** The table entry describing one list endpoint. */
export interface ListEndpointDef<R> {
  readonly path: string;
  readonly records: readonly R[];
  readonly ordering: Ordering<R>;
  readonly filters: Readonly<Record<string, FilterDef<R>>>;
}

/** One page: the records, in list order, and whether more match. */
export interface Page {
  readonly records: readonly unknown[];
  readonly hasMore: boolean;
  /** The position of the last returned record (null for an empty page). */
  readonly last: CursorPosition | null;
}

/** A filtered list, ready to page. */
export interface QueryPlan {
  /** Up to `take` matching records strictly after `after` (from the start when null). */
  page(after: CursorPosition | null, take: number): Page;
}

/** A ready list endpoint, its record type erased. */
export interface ListEndpoint {
  readonly path: string;
  readonly rules: Readonly<Record<string, ParamRule>>;
  /**
   * Compiles parsed filter values into a plan.
   *
   * @throws ApiError INVALID_INPUT for values that parse but cannot filter (e.g. a blank search).
   */
  plan(values: ParamValues): QueryPlan;
}

/**
 * A list endpoint whose records can change while it serves (events added to a running
 * sandbox). A change made between two requests is seen by the second; a cursor keeps
 * resuming strictly after its position.
 */
export interface EditableListEndpoint<R> extends ListEndpoint {
  /** Adds a record at its place in list order and in every index. */
  insert(record: R): void;
  /** Takes out a record (the very object) added before; false when it is not in the list. */
  remove(record: R): boolean;
}

/**
 * Builds a list endpoint: sorts the records once, builds the indexes, and pages
 * by keyset. A page walks the smallest usable index list (or the whole sorted
 * list) from the binary-searched cursor position and stops after `take + 1`
 * matches, so its cost follows the page size and the filter's selectivity,
 * not the list length; a fence (`since` on events) ends the walk early.
 * `insert` and `remove` keep the sorted list and every
 * index bucket in order (a binary search and a splice each), so paging never
 * re-sorts.
 */
export function createListEndpoint<R>(def: ListEndpointDef<R>): EditableListEndpoint<R> {
  const sorted = sortRecords(def.records, def.ordering);
  const indexes = new Map<string, Map<string, R[]>>();
  /** Each index's buckets (every one in list order) with the keys a record is found under. */
  const indexed: { buckets: Map<string, R[]>; keys: (record: R) => readonly string[] }[] = [];
  for (const [name, filter] of Object.entries(def.filters)) {
    if (!filter.index) continue;
    const index = new Map<string, R[]>();
    for (const record of sorted) {
      for (const key of filter.index.keys(record)) {
        const bucket = index.get(key);
        if (bucket) bucket.push(record);
        else index.set(key, [record]);
      }
    }
    indexes.set(name, index);
    indexed.push({ buckets: index, keys: filter.index.keys });
  }
  const watchers = Object.values(def.filters).flatMap((filter) =>
    filter.fence ? [filter.fence] : [],
  );
  for (const fence of watchers) for (const record of sorted) fence.observe(record);
  const rules = Object.fromEntries(
    Object.entries(def.filters).map(([name, filter]) => [name, filter.rule]),
  );

  return {
    path: def.path,
    rules,
    insert(record) {
      for (const fence of watchers) fence.observe(record);
      insertSorted(sorted, def.ordering, record);
      for (const { buckets, keys } of indexed) {
        for (const key of new Set(keys(record))) {
          const bucket = buckets.get(key);
          if (bucket) insertSorted(bucket, def.ordering, record);
          else buckets.set(key, [record]);
        }
      }
    },
    remove(record) {
      if (!removeSorted(sorted, def.ordering, record)) return false;
      for (const { buckets, keys } of indexed) {
        for (const key of new Set(keys(record))) {
          const bucket = buckets.get(key);
          if (bucket) removeSorted(bucket, def.ordering, record);
        }
      }
      return true;
    },
    plan(values) {
      let candidates: readonly R[] = sorted;
      const predicates: ((record: R) => boolean)[] = [];
      const fences: CursorPosition[] = [];
      for (const [name, value] of Object.entries(values)) {
        const filter = def.filters[name];
        if (!filter) continue;
        predicates.push(filter.predicate(value));
        const fence = filter.fence?.after(value);
        if (fence) fences.push(fence);
        const key = filter.index?.lookup(value);
        if (key === undefined) continue;
        const bucket = indexes.get(name)?.get(key) ?? [];
        if (bucket.length < candidates.length) candidates = bucket;
      }
      const list = candidates;
      return {
        page(after, take) {
          let i = after === null ? 0 : indexAfter(list, def.ordering, after);
          let end = list.length;
          for (const fence of fences) end = Math.min(end, indexAfter(list, def.ordering, fence));
          const records: R[] = [];
          let hasMore = false;
          outer: for (; i < end; i++) {
            const record = list[i] as R;
            for (const test of predicates) if (!test(record)) continue outer;
            if (records.length === take) {
              hasMore = true;
              break;
            }
            records.push(record);
          }
          const lastRecord = records[records.length - 1];
          return {
            records,
            hasMore,
            last: lastRecord === undefined ? null : def.ordering.key(lastRecord),
          };
        },
      };
    },
  };
}
