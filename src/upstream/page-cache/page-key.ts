import { hash } from 'node:crypto';
import type { UpstreamRequest } from '../upstream-call.js';

/** Hashes of the keys seen lately: a key is hashed once, not per page. */
const keyHashes = new Map<string, string>();
const KEY_HASHES_REMEMBERED = 1_000;

/**
 * A hash of the caller's key (SHA-256, 128 bits as base64url) that names its pages in the cache:
 * the key itself is never stored. API keys are random and long, so no salt is needed to keep the
 * hash from revealing one; and every instance sharing a cache derives the same.
 */
export function keyHash(apiKey: string): string {
  let hashed = keyHashes.get(apiKey);
  if (hashed === undefined) {
    hashed = hash('sha256', `business-signals-gateway/page-cache/v1\n${apiKey}`, 'base64url');
    hashed = hashed.slice(0, 22);
    if (keyHashes.size >= KEY_HASHES_REMEMBERED) keyHashes.clear();
    keyHashes.set(apiKey, hashed);
  }
  return hashed;
}

/**
 * The cache key of a page: the key's hash, the endpoint, the canonical filter query, the cursor
 * and the limit. Pages of two keys never share one, even of the same workspace (the service may
 * answer them differently).
 */
export function pageKey(request: UpstreamRequest): string {
  const { apiKey, endpoint, filterQuery, cursor, limit } = request;
  return `${keyHash(apiKey)}\n${endpoint}?${filterQuery}\n${cursor ?? ''}\n${limit}`;
}

/**
 * The key hash a page's ({@link pageKey}) or an answer's (`answerKey`) name starts with: the
 * stores drop all of one key's at once when the service refuses it (`PageStore.revoke`).
 */
export function ownerOf(name: string): string {
  return name.slice(0, name.indexOf('\n'));
}
