import { createHash, createHmac } from 'node:crypto';
import { invalidArgument } from '../errors.js';

/**
 * A position in a connection, as the gateway's cursors carry it: resume at upstream page
 * `upstream` (null for the first page) after skipping `skip` records, or nowhere when `done`.
 */
export interface ConnectionPosition {
  upstream: string | null;
  skip: number;
  done: boolean;
}

const VERSION = 'c1';

/** A short digest of what a connection lists (endpoint and filters) that cursors are bound to. */
export function fingerprint(scope: string): string {
  return createHash('sha256').update(scope).digest('base64url').slice(0, 12);
}

function sign(payload: string, secret: string) {
  return createHmac('sha256', secret).update(payload).digest('base64url').slice(0, 16);
}

/** Encodes a position bound to `boundTo` (a {@link fingerprint}), signed with `secret`. */
export function encodeCursor(position: ConnectionPosition, boundTo: string, secret: string) {
  const payload = Buffer.from(
    JSON.stringify([position.upstream, position.skip, position.done ? 1 : 0, boundTo]),
  ).toString('base64url');
  return `${VERSION}.${payload}.${sign(payload, secret)}`;
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
  const [version, payload, mac, extra] = cursor.split('.');
  if (version !== VERSION || !payload || !mac || extra !== undefined) throw malformed();
  if (sign(payload, secret) !== mac) throw malformed();
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw malformed();
  }
  if (!Array.isArray(decoded) || decoded.length !== 4) throw malformed();
  const [upstream, skip, done, bound] = decoded as unknown[];
  if (
    (upstream !== null && typeof upstream !== 'string') ||
    !Number.isSafeInteger(skip) ||
    (skip as number) < 0 ||
    (done !== 0 && done !== 1) ||
    typeof bound !== 'string'
  ) {
    throw malformed();
  }
  if (bound !== boundTo) {
    throw invalidArgument(
      argument,
      'this cursor was issued for a different list or different filters; pass the same filters it was issued with',
    );
  }
  return { upstream: upstream as string | null, skip: skip as number, done: done === 1 };
}
