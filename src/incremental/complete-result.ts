import type { ExecutionResult, GraphQLError } from 'graphql';
import { errorsOf, type IncrementalPayload } from './incremental-payload.js';

type Json = unknown;

function isObject(value: Json): value is Record<string, Json> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `source` merged into `target`: objects key by key, lists item by item, anything else replaced. */
function merge(target: Json, source: Json): Json {
  if (isObject(target) && isObject(source)) {
    for (const [key, value] of Object.entries(source)) target[key] = merge(target[key], value);
    return target;
  }
  if (Array.isArray(target) && Array.isArray(source)) {
    source.forEach((item, index) => (target[index] = merge(target[index], item)));
    return target;
  }
  return source;
}

/** The value at `path` in `data`, if every step of it is there. */
function at(data: Json, path: readonly (string | number)[]): Json {
  let value = data;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string | number, Json>)[key];
  }
  return value;
}

/**
 * The whole answer of an operation delivered in parts, as its payloads arrive: each deferred
 * fragment's `data` merged at its path, each stream's `items` put at theirs, every error kept in
 * order: what a client that reads every payload ends with, and what the answer is in one piece
 * (its members maybe in another order). The payloads' `extensions` are left out: they are the
 * request's own, not the answer's.
 */
export class CompleteResult {
  data: Record<string, Json> | null | undefined;
  readonly errors: GraphQLError[] = [];
  /** False once the last payload (`hasNext: false`) was added. */
  hasNext = true;

  add(payload: IncrementalPayload): void {
    // A copy: the payload itself is yet to be written, and later parts are merged into this.
    if ('data' in payload) this.data = payload.data ? structuredClone(payload.data) : payload.data;
    this.errors.push(...errorsOf(payload));
    for (const part of payload.incremental ?? []) {
      const path = part.path ?? [];
      if (part.items) {
        const { items } = part;
        const list = at(this.data, path.slice(0, -1));
        const start = path.at(-1);
        if (Array.isArray(list) && typeof start === 'number') {
          list.splice(start, items.length, ...items);
        }
      } else if (part.data) {
        const parent = path.length ? at(this.data, path) : this.data;
        merge(parent, part.data);
      }
    }
    if (payload.hasNext === false) this.hasNext = false;
  }

  /** The answer as one result: its data, and its errors when it had any. */
  get result(): ExecutionResult {
    return {
      data: this.data,
      ...(this.errors.length ? { errors: this.errors } : {}),
    };
  }
}
