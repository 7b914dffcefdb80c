import type { GraphQLError } from 'graphql';

type Path = readonly (string | number)[];

/** A payload's part: a deferred fragment's `data`, or a stream's `items`, at `path`. */
export interface IncrementalPart {
  data?: Record<string, unknown> | null;
  items?: readonly unknown[] | null;
  path?: Path;
  label?: string;
  errors?: readonly GraphQLError[];
  extensions?: Record<string, unknown>;
}

/**
 * One payload of an answer delivered in parts, in the format of the incremental delivery RFC of
 * 2022-08-24 that the executor writes (and Apollo Client's `Defer20220824Handler`, Relay and urql
 * read): the first `{ data, errors?, hasNext: true }`, then `{ incremental?, hasNext }`, each part
 * of `incremental` a deferred fragment's `data` or a stream's `items` at its `path`, with its own
 * `errors`. The last says `hasNext: false`.
 */
export interface IncrementalPayload {
  data?: Record<string, unknown> | null;
  errors?: readonly GraphQLError[];
  incremental?: readonly IncrementalPart[];
  hasNext?: boolean;
  extensions?: object;
}

/** Every error a payload carries: its own, then its parts' in order. */
export function errorsOf(payload: IncrementalPayload): GraphQLError[] {
  const errors = [...(payload.errors ?? [])];
  for (const part of payload.incremental ?? []) errors.push(...(part.errors ?? []));
  return errors;
}

/** `payload` with each of its parts' errors replaced by `map`'s. */
export function mapPartErrors(
  payload: IncrementalPayload,
  map: (error: GraphQLError) => GraphQLError,
): IncrementalPayload {
  if (!payload.incremental?.some((part) => part.errors?.length)) return payload;
  return {
    ...payload,
    incremental: payload.incremental.map((part) =>
      part.errors?.length ? { ...part, errors: part.errors.map(map) } : part,
    ),
  };
}

/** Whether `path` starts with `prefix`. */
function leadsTo(prefix: Path, path: Path): boolean {
  return prefix.length <= path.length && prefix.every((key, index) => path[index] === key);
}

/** Whether `data` holds a value (null included) at `path`. */
function holds(data: unknown, path: Path): boolean {
  let value = data;
  for (const key of path) {
    if (value === null || typeof value !== 'object' || !(key in value)) return false;
    value = (value as Record<string | number, unknown>)[key];
  }
  return true;
}

/**
 * Places errors raised beside the executor (`Context.fieldErrors`) in the payload that carries
 * their field, where a client reads them: in the first payload, at its top, those whose field it
 * holds; in a later one, in the part whose path leads to each. The rest wait for a later payload,
 * and the last takes them all (in its first part, or at its top). Returns the payload and the
 * errors still waiting.
 */
export function placeErrors(
  payload: IncrementalPayload,
  errors: readonly GraphQLError[],
): { payload: IncrementalPayload; waiting: GraphQLError[] } {
  if (errors.length === 0) return { payload, waiting: [] };
  const last = payload.hasNext === false;
  const parts = payload.incremental ?? [];
  const waiting: GraphQLError[] = [];
  const top: GraphQLError[] = [];
  const inPart = parts.map(() => [] as GraphQLError[]);
  for (const error of errors) {
    const path = error.path ?? [];
    const part = parts.findIndex((candidate) => leadsTo(candidate.path ?? [], path));
    if (part >= 0) inPart[part]!.push(error);
    else if ('data' in payload && holds(payload.data, path)) top.push(error);
    else if (!last) waiting.push(error);
    else if (parts.length) inPart[0]!.push(error);
    else top.push(error);
  }
  const placed: IncrementalPayload = {
    ...payload,
    ...(top.length ? { errors: [...(payload.errors ?? []), ...top] } : {}),
    ...(parts.length
      ? {
          incremental: parts.map((part, index) =>
            inPart[index]!.length
              ? { ...part, errors: [...(part.errors ?? []), ...inPart[index]!] }
              : part,
          ),
        }
      : {}),
  };
  return { payload: placed, waiting };
}
