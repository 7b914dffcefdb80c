import { invalidArgument } from '../errors.js';
import { buildFilterQuery, UPSTREAM_MAX_LIMIT } from '../upstream/build-query.js';
import type { EndpointFilters, EndpointName, EndpointRecords } from '../upstream/endpoints.js';
import { UpstreamError } from '../upstream/upstream-error.js';
import type { UpstreamSession } from '../upstream/upstream-session.js';
import {
  cursorEncoder,
  decodeCursor,
  fingerprint,
  type ConnectionPosition,
} from './cursor-codec.js';

/** Relay's connection arguments, as Pothos passes them. */
export interface ConnectionArgs {
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
}

/** Paging settings from the config. */
export interface PagingOptions {
  defaultPageSize: number;
  maxPageSize: number;
  cursorSecret: string;
}

/** An edge whose cursor is only encoded if the client asks for it. */
class Edge<T> {
  constructor(
    readonly node: T,
    private readonly encode: (skip: number, done: boolean) => string,
    private readonly skip: number,
    private readonly done: boolean,
  ) {}

  get cursor() {
    return this.encode(this.skip, this.done);
  }
}

/**
 * A connection's page info, its cursors encoded only if the client asks for them. A class, with
 * the cursors as getters of its prototype: an object literal with getters would define them anew
 * on each connection, with closures over the resolver's scope, and V8's young-generation
 * collector then kept each connection's records until the next full collection (BENCHMARKS.md,
 * issue 39's fourth day).
 */
class PageInfo<T> {
  readonly hasPreviousPage = false;

  constructor(
    readonly hasNextPage: boolean,
    private readonly edges: readonly Edge<T>[],
    /** Where the connection stopped short with no edge: the position it started from. */
    private readonly stoppedAt: string | null,
  ) {}

  get startCursor(): string | null {
    return this.edges[0]?.cursor ?? null;
  }

  get endCursor(): string | null {
    return this.edges.at(-1)?.cursor ?? this.stoppedAt;
  }
}

export interface UpstreamConnection<T> {
  edges: Edge<T>[];
  pageInfo: PageInfo<T>;
}

/**
 * Checks `first`/`last`/`before` and returns the page size; throws INVALID_INPUT. The one
 * statement of the rule: the estimate counts what this returns, and nothing when it throws.
 */
export function pageSize(
  args: ConnectionArgs,
  options: Pick<PagingOptions, 'defaultPageSize' | 'maxPageSize'>,
): number {
  if (args.last != null || args.before != null) {
    throw invalidArgument(
      args.last != null ? 'last' : 'before',
      'the Business-Signals API pages forward only; use "first" and "after"',
    );
  }
  const first = args.first ?? options.defaultPageSize;
  if (first < 0 || first > options.maxPageSize) {
    throw invalidArgument('first', `must be between 0 and ${options.maxPageSize} (got ${first})`);
  }
  return first;
}

/**
 * Serves a Relay connection from a forward-only upstream list. `first` records are fetched in
 * upstream pages of at most {@link UPSTREAM_MAX_LIMIT}, never more than asked for. Each edge's
 * cursor resumes right after it: the last edge of an upstream page resumes at the upstream's
 * `nextCursor` at no extra cost; an edge in the middle of a page re-reads that page up to it
 * (those records are charged again). Cursors are bound to the endpoint and filters they were
 * issued for. When a later upstream page fails, the edges already fetched are returned and the
 * error goes to `onPartialFailure` (without it, the error is thrown). When the operation's
 * credits run out, the connection ends where it got to, even with no edge: `hasNextPage` is true
 * and `endCursor` resumes from there.
 */
export async function resolveUpstreamConnection<E extends EndpointName>(
  session: UpstreamSession,
  endpoint: E,
  filters: EndpointFilters<E>,
  args: ConnectionArgs,
  options: PagingOptions,
  onPartialFailure?: (error: unknown) => void,
): Promise<UpstreamConnection<EndpointRecords[E]>> {
  const first = pageSize(args, options);
  const filterQuery = buildFilterQuery(endpoint, filters);
  // Hashed only when a cursor is read or written.
  let bound: string | undefined;
  const boundTo = () => (bound ??= fingerprint(`${endpoint}?${filterQuery}`));
  const start: ConnectionPosition = args.after
    ? decodeCursor(args.after, boundTo(), options.cursorSecret)
    : { upstream: null, skip: 0, done: false };

  const edges: Edge<EndpointRecords[E]>[] = [];
  let hasNextPage = false;
  /** Where the connection stopped short with no edge: the position it started from. */
  let stoppedAt: string | null = null;
  let cursor = start.upstream;
  let skip = start.skip;
  while (!start.done && edges.length < first) {
    const want = first - edges.length;
    const limit = Math.min(UPSTREAM_MAX_LIMIT, want + skip);
    let page;
    try {
      page = await session.page(endpoint, filterQuery, { cursor, limit, skip });
    } catch (error) {
      // Records already paid for are not thrown away because a later page failed (say, the
      // credits ran out mid-way): return them, report the error, and let the client resume.
      const spent = error instanceof UpstreamError && error.failure === 'budget';
      if (!onPartialFailure || (edges.length === 0 && !spent)) throw error;
      onPartialFailure(error);
      hasNextPage = true;
      stoppedAt = args.after ?? null;
      break;
    }
    const { data, pagination } = page;
    const nextCursor = pagination.hasMore ? pagination.nextCursor : null;
    const taken = data.slice(skip, skip + want);
    const here = cursorEncoder(cursor, boundTo, options.cursorSecret);
    const next = cursorEncoder(nextCursor, boundTo, options.cursorSecret);
    for (let i = 0; i < taken.length; i++) {
      // A null in `data` carries no record: skip it, but keep the positions of the others.
      if (taken[i] == null) continue;
      const index = skip + i;
      edges.push(
        index === data.length - 1
          ? new Edge(taken[i]!, next, 0, nextCursor === null)
          : new Edge(taken[i]!, here, index + 1, false),
      );
    }
    if (skip + taken.length < data.length) {
      hasNextPage = true;
      break;
    }
    skip = Math.max(0, skip - data.length);
    hasNextPage = nextCursor !== null;
    // An empty page that claims more would loop forever; report it and stop.
    if (nextCursor === null || data.length === 0) break;
    cursor = nextCursor;
  }
  return { edges, pageInfo: new PageInfo(hasNextPage, edges, stoppedAt) };
}
