import { hash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { keyHash } from '../upstream/page-cache/page-key.js';

/** The request headers that change an answer's bytes or headers (its type, its CORS headers). */
const SHAPING_HEADERS = ['accept', 'content-type', 'origin'] as const;

/**
 * The name of a whole answer: the caller's key as the page cache scopes it (its hash), and every
 * byte of the request that selects the answer: the method and URL (a GET's query string), the
 * headers that shape the response, and the body (document, operation name, variables, a persisted
 * query's id). Two requests share a name only if they ask exactly the same thing of the same
 * workspace key; requests that mean the same but differ in a byte are kept apart, never confused.
 * `version` names what may run on the instance that made it (`Admission.version`: the schema and
 * the admission settings): instances of another version or other rules sharing a Redis (a rolling
 * deploy, `TRUSTED_DOCUMENTS` turned on) never serve each other's answers.
 * The key's hash, a newline and a SHA-256 as base64url: a fixed size whatever the document's, led
 * by its owner as a page's name is (`ownerOf`), so that the stores bound and drop one key's.
 */
export function answerKey(
  upstreamKey: string,
  request: IncomingMessage,
  body: Buffer | null,
  version: string,
): string {
  const parts = [version, keyHash(upstreamKey), request.method ?? '', request.url ?? ''];
  for (const name of SHAPING_HEADERS) parts.push(String(request.headers[name] ?? ''));
  const head = parts.join('\n');
  const digest =
    body === null || body.length === 0
      ? hash('sha256', head, 'base64url')
      : hash('sha256', Buffer.concat([Buffer.from(`${head}\n`), body]), 'base64url');
  return `${parts[1]}\n${digest}`;
}
