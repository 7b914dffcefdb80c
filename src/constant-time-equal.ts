import { timingSafeEqual } from 'node:crypto';

/**
 * Compares a signature with the expected one in constant time, so that timing tells nothing of
 * the right one (cursors and global ids are signed).
 */
export function constantTimeEqual(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}
