import type { Sandbox } from '../../src/sandbox/index.js';

/** Small record counts: every test file starts its own sandbox in well under a second. */
export const SMALL_SIZES = {
  companies: 300,
  investors: 120,
  persons: 200,
  fundingEvents: 600,
  acquisitions: 250,
  execMoves: 400,
};

export type Query = Record<string, string | number | boolean | readonly string[]>;

export interface SuccessBody {
  success: true;
  data: Record<string, unknown>[];
  pagination: { hasMore: boolean; nextCursor: string | null };
  meta: { endpoint: string; creditsUsed: number; creditsRemaining: number };
}

export interface ErrorBody {
  success: false;
  error: { code: string; message: string };
  meta: { requestId: string };
}

export interface Reply<B> {
  status: number;
  headers: Headers;
  body: B;
}

export function toSearch(query: Query): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (Array.isArray(value)) for (const item of value as string[]) search.append(name, item);
    else search.append(name, String(value));
  }
  return search.toString();
}

/** GET a /v1 path with an API key (pass null to send none). */
export async function get<B = SuccessBody>(
  sandbox: Sandbox,
  path: string,
  query: Query | string = {},
  key: string | null = sandbox.keys.demo,
): Promise<Reply<B>> {
  const search = typeof query === 'string' ? query : toSearch(query);
  const res = await fetch(`${sandbox.url}${path}${search ? `?${search}` : ''}`, {
    headers: key === null ? {} : { 'X-API-Key': key },
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: JSON.parse(text) as B };
}

export interface Walk {
  records: Record<string, unknown>[];
  pages: number;
  creditsUsed: number;
  lastRemaining: number | null;
}

/** Pages a list to exhaustion, checking every page's envelope on the way. */
export async function walk(
  sandbox: Sandbox,
  path: string,
  query: Query,
  key: string = sandbox.keys.demo,
  limits: readonly number[] = [100],
): Promise<Walk> {
  const records: Record<string, unknown>[] = [];
  let cursor: string | null = null;
  let pages = 0;
  let creditsUsed = 0;
  let lastRemaining: number | null = null;
  do {
    const limit = limits[pages % limits.length] as number;
    const reply: Reply<SuccessBody> = await get(
      sandbox,
      path,
      { ...query, limit, ...(cursor ? { cursor } : {}) },
      key,
    );
    if (reply.status !== 200)
      throw new Error(`${path} ${toSearch(query)}: ${reply.status} ${JSON.stringify(reply.body)}`);
    const { data, pagination, meta } = reply.body;
    if (data.length > limit) throw new Error('page larger than limit');
    if (meta.creditsUsed !== data.length)
      throw new Error('creditsUsed differs from records returned');
    if (pagination.hasMore === (pagination.nextCursor === null))
      throw new Error('hasMore and nextCursor disagree');
    records.push(...data);
    creditsUsed += meta.creditsUsed;
    lastRemaining = meta.creditsRemaining;
    cursor = pagination.nextCursor;
    pages += 1;
    if (pages > 10_000) throw new Error('pagination does not end');
  } while (cursor !== null);
  return { records, pages, creditsUsed, lastRemaining };
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Newest discovery first, ties by id descending (the documented event order). */
export function byDiscovery<R extends { discoveredAt: string; id: string }>(
  records: readonly R[],
): R[] {
  return [...records].sort(
    (a, b) => Date.parse(b.discoveredAt) - Date.parse(a.discoveredAt) || cmp(b.id, a.id),
  );
}

/** Name ascending by code units, ties by id ascending (the documented directory order). */
export function byName<R extends { name: string; id: string }>(records: readonly R[]): R[] {
  return [...records].sort((a, b) => cmp(a.name, b.name) || cmp(a.id, b.id));
}

export const ids = (records: readonly { id?: unknown }[]): unknown[] => records.map((r) => r.id);
