import { createHash, createHmac } from 'node:crypto';
import { constantTimeEqual } from '../constant-time-equal.js';
import { invalidArgument } from '../errors.js';
import { UPSTREAM_MAX_LIMIT } from '../upstream/build-query.js';

/**
 * A position in a connection, as the gateway's cursors carry it: resume at upstream page
 * `upstream` (null for the first page) after skipping `skip` records, or nowhere when `done`.
 */
export interface ConnectionPosition {
  upstream: string | null;
  skip: number;
  done: boolean;
}

const VERSION = 'c2';

/** No position skips more than one upstream page holds. */
const MAX_SKIP = UPSTREAM_MAX_LIMIT;

/** A short digest of what a connection lists (endpoint and filters) that cursors are bound to. */
export function fingerprint(scope: string): string {
  return createHash('sha256').update(scope).digest('base64url').slice(0, 12);
}

/**
 * Signs the upstream cursor together with the binding. `skip` and `done` stay outside the
 * signature on purpose: every value they can take (skip 0..`MAX_SKIP` within that upstream page)
 * names a position the same connection could have issued, so one signature serves a whole page of
 * edges.
 */
function sign(upstream: string | null, boundTo: string, secret: string) {
  return createHmac('sha256', secret)
    .update(`${boundTo}\n${upstream ?? ''}`)
    .digest('base64url')
    .slice(0, 16);
}

/**
 * Encodes positions bound to `boundTo` (a {@link fingerprint}), signed with `secret`. Returns an
 * encoder for one upstream page, so that its edges share one signature.
 */
export function cursorEncoder(
  upstream: string | null,
  boundTo: string | (() => string),
  secret: string,
) {
  let signed: string | undefined;
  return (skip: number, done: boolean) => {
    if (signed === undefined) {
      const bound = typeof boundTo === 'string' ? boundTo : boundTo();
      const encoded = upstream === null ? '' : Buffer.from(upstream).toString('base64url');
      signed = `${sign(upstream, bound, secret)}.${bound}.${encoded}`;
    }
    return `${VERSION}.${skip}.${done ? 1 : 0}.${signed}`;
  };
}

/** Encodes one position; see {@link cursorEncoder}. */
export function encodeCursor(position: ConnectionPosition, boundTo: string, secret: string) {
  return cursorEncoder(position.upstream, boundTo, secret)(position.skip, position.done);
}

/**
 * Decodes a cursor from argument `argument`; throws INVALID_INPUT when it is malformed, was
 * altered, or was issued by a connection with other filters than `boundTo`.
 */
export function decodeCursor(
  cursor: string,
  boundTo: string,
  secret: string,
  argument = 'after',
): ConnectionPosition {
  const malformed = () =>
    invalidArgument(argument, 'is not a cursor this gateway issued (malformed or altered)');
  const parts = cursor.split('.');
  if (parts.length !== 6 || parts[0] !== VERSION) throw malformed();
  const [, skipText, doneText, mac, bound, encoded] = parts as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  const skip = /^\d{1,3}$/.test(skipText) ? Number(skipText) : NaN;
  if (!(skip <= MAX_SKIP) || (doneText !== '0' && doneText !== '1')) throw malformed();
  const upstream = encoded === '' ? null : Buffer.from(encoded, 'base64url').toString('utf8');
  if (upstream !== null && Buffer.from(upstream).toString('base64url') !== encoded) {
    throw malformed();
  }
  if (!constantTimeEqual(sign(upstream, bound, secret), mac)) throw malformed();
  if (bound !== boundTo) {
    throw invalidArgument(
      argument,
      'this cursor was issued for a different list or different filters; pass the same filters it was issued with',
    );
  }
  return { upstream, skip, done: doneText === '1' };
}

/**
 * Where a cursor says its connection resumes, read without checking it (for the credit estimate,
 * before anything runs): the records it skips in its upstream page and whether the list is done.
 * Null for anything that is not a cursor of this form; the resolver refuses those for nothing.
 */
export function peekPosition(cursor: string): Pick<ConnectionPosition, 'skip' | 'done'> | null {
  const parts = cursor.split('.', 3);
  if (parts[0] !== VERSION || !/^\d{1,3}$/.test(parts[1] ?? '')) return null;
  const skip = Number(parts[1]);
  return skip <= MAX_SKIP ? { skip, done: parts[2] === '1' } : null;
}
