import { createHash } from 'node:crypto';
import type { Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import { ErrorCode, gatewayError } from '../errors.js';

/** Bounds of the store of automatic persisted queries (per process). */
export interface ApqOptions {
  /** Most documents held (default 4,096). */
  maxDocuments?: number;
  /** Most query text held, in UTF-16 code units, about bytes (default 16 Mi). */
  maxChars?: number;
}

/** The `sha256Hash` of an `extensions.persistedQuery` of version 1, in lower case; else null. */
function apqHashOf(extensions: Record<string, unknown> | undefined): string | null {
  const persisted = extensions?.['persistedQuery'] as Record<string, unknown> | null | undefined;
  if (persisted?.['version'] !== 1 || typeof persisted['sha256Hash'] !== 'string') return null;
  return persisted['sha256Hash'].toLowerCase();
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/**
 * Automatic persisted queries, Apollo's protocol: a request with
 * `extensions.persistedQuery: { version: 1, sha256Hash }` and no `query` runs the query registered
 * under that hash, or fails `PersistedQueryNotFound` (PERSISTED_QUERY_NOT_FOUND, HTTP 404) so that
 * the client sends it again with the query; a request with both registers the query, after
 * checking that the hash is the SHA-256 of its UTF-8 text (else PERSISTED_QUERY_MISMATCH, HTTP
 * 400), and runs it. The codes, the statuses and the not-found message are those of
 * `@graphql-yoga/plugin-apq`, which is not used: its one release for Yoga 5 on the registry
 * (3.6.2) declares a peer `@graphql-tools/utils@^10`, which Yoga 5.24's `^11` rules out, so npm
 * refuses to install it.
 *
 * One store serves every caller, and may: an entry is only ever written under the SHA-256 of its
 * own text (the check above), so a hash names the same text whoever sends it, and a caller gets
 * back only a document whose hash it already had. The store holds query text, never variables,
 * results or keys; a hash-only request runs under its own caller's key, budget and limits, as
 * the same query sent in full does. All a caller can learn from the store is whether a document
 * it can already name was sent since the process started.
 *
 * The store is an LRU, bounded by count and by size: apps send tens to hundreds of distinct
 * operations of a few KB each, so 4,096 documents hold many apps' worth, and 16 Mi characters
 * bound the memory even when callers register documents as large as `MAX_REQUEST_BYTES`. An
 * eviction costs its client one round trip (not found, then the query again), never a wrong
 * answer; each process (each worker) has its own store.
 */
export function useApq({
  maxDocuments = 4_096,
  maxChars = 16 * 1024 * 1024,
}: ApqOptions = {}): Plugin {
  const store = new LRUCache<string, string>({
    max: maxDocuments,
    maxSize: maxChars,
    sizeCalculation: (query) => Math.max(query.length, 1),
  });
  return {
    onParams({ params, setParams }) {
      const hash = apqHashOf(params.extensions);
      if (hash === null) return;
      if (params.query == null || params.query === '') {
        const query = store.get(hash);
        if (query === undefined) throw notFound();
        setParams({ ...params, query });
      } else if (typeof params.query === 'string') {
        if (sha256(params.query) !== hash) throw mismatch();
        store.set(hash, params.query);
      }
    },
  };
}

function notFound() {
  return gatewayError(ErrorCode.PERSISTED_QUERY_NOT_FOUND, 'PersistedQueryNotFound');
}

function mismatch() {
  return gatewayError(
    ErrorCode.PERSISTED_QUERY_MISMATCH,
    'PersistedQueryMismatch: extensions.persistedQuery.sha256Hash is not the SHA-256 of the query sent with it; hash the exact query text (UTF-8, hex digest).',
  );
}
