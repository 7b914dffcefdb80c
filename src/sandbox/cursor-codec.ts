import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { ApiError } from './api-error.js';

/** Where a page ended: the sort key of its last record (e.g. [discoveredAt, id] or [name, id]). */
export type CursorPosition = readonly [string, string];

/** Issues and checks the opaque cursors of one sandbox instance. */
export interface CursorCodec {
  /** A cursor resuming `endpoint`, under the filters whose canonical text is `canonical`, strictly after `position`. */
  encode(endpoint: string, canonical: string, position: CursorPosition): string;
  /**
   * The position a cursor resumes after.
   *
   * @throws ApiError INVALID_INPUT when the cursor is malformed or tampered
   *   with, or was issued for another endpoint or other filters.
   */
  decode(cursor: string, endpoint: string, canonical: string): CursorPosition;
}

const VERSION = 1;

function filterHash(endpoint: string, canonical: string): string {
  return createHash('sha256')
    .update(endpoint)
    .update('\n')
    .update(canonical)
    .digest('base64url')
    .slice(0, 16);
}

/**
 * Creates the codec. A cursor is `base64url(JSON payload) "." base64url(HMAC)`;
 * the payload holds the endpoint, a hash of the filters and the position. The
 * HMAC key comes from `secret`, so cursors survive restarts with the same seed
 * and fail with another one.
 */
export function createCursorCodec(secret: string): CursorCodec {
  const key = createHash('sha256').update(`business-signals-sandbox:${secret}`).digest();
  const sign = (payload: string): Buffer =>
    createHmac('sha256', key).update(payload).digest().subarray(0, 16);
  const malformed = (): ApiError =>
    new ApiError(
      'INVALID_INPUT',
      'cursor is malformed: pass pagination.nextCursor from a previous response unchanged',
    );

  return {
    encode(endpoint, canonical, position) {
      const payload = Buffer.from(
        JSON.stringify([
          VERSION,
          endpoint,
          filterHash(endpoint, canonical),
          position[0],
          position[1],
        ]),
      ).toString('base64url');
      return `${payload}.${sign(payload).toString('base64url')}`;
    },
    decode(cursor, endpoint, canonical) {
      const dot = cursor.indexOf('.');
      if (dot <= 0) throw malformed();
      const payload = cursor.slice(0, dot);
      const signature = Buffer.from(cursor.slice(dot + 1), 'base64url');
      const expected = sign(payload);
      if (signature.length !== expected.length || !timingSafeEqual(signature, expected))
        throw malformed();
      let parsed: unknown;
      try {
        parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      } catch {
        throw malformed();
      }
      if (
        !Array.isArray(parsed) ||
        parsed.length !== 5 ||
        parsed[0] !== VERSION ||
        !parsed.slice(1).every((part) => typeof part === 'string')
      ) {
        throw malformed();
      }
      const [, issuedFor, hash, first, second] = parsed as [number, string, string, string, string];
      if (issuedFor !== endpoint) {
        throw new ApiError('INVALID_INPUT', `cursor was issued for ${issuedFor}, not ${endpoint}`);
      }
      if (hash !== filterHash(endpoint, canonical)) {
        throw new ApiError(
          'INVALID_INPUT',
          'cursor was issued for different filters: repeat the filters of the request that returned it (limit may change)',
        );
      }
      return [first, second];
    },
  };
}
