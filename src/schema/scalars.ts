import { GraphQLError, Kind } from 'graphql';
import { ErrorCode } from '../errors.js';
import { builder } from './builder.js';

const ISO_8601 =
  /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2}))?$/i;

function invalid(message: string) {
  return new GraphQLError(message, { extensions: { code: ErrorCode.INVALID_INPUT } });
}

/** Accepts an ISO-8601 date or date-time and returns it unchanged; throws INVALID_INPUT. */
export function parseDateTime(value: unknown): string {
  if (typeof value !== 'string' || !ISO_8601.test(value) || Number.isNaN(Date.parse(value))) {
    throw invalid(
      `DateTime must be an ISO-8601 date or date-time such as "2024-05-01T12:00:00.000Z" (got ${JSON.stringify(value)})`,
    );
  }
  return value;
}

builder.scalarType('DateTime', {
  description:
    'An ISO-8601 timestamp. Output is the service\'s own UTC string with milliseconds, unchanged; input accepts a date ("2024-05-01") or a date-time with a zone ("2024-05-01T12:00:00Z").',
  serialize: (value) => (value instanceof Date ? value.toISOString() : String(value)),
  parseValue: parseDateTime,
  parseLiteral: (ast) => parseDateTime(ast.kind === Kind.STRING ? ast.value : undefined),
});

/** An integer within ±(2^53 - 1), from a number or a decimal string; throws otherwise. */
export function toSafeInt(value: unknown): number {
  const number =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && /^-?\d+$/.test(value)
        ? Number(value)
        : NaN;
  if (!Number.isSafeInteger(number)) {
    throw invalid(
      `SafeInt must be an integer between -(2^53-1) and 2^53-1 (got ${JSON.stringify(value)})`,
    );
  }
  return number;
}

builder.scalarType('SafeInt', {
  description:
    "An integer up to ±(2^53 - 1), sent as a JSON number: amounts in cents exceed GraphQL's 32-bit Int (a $40B deal is 4,000,000,000,000 cents) but stay exact in JavaScript numbers.",
  serialize: toSafeInt,
  parseValue: toSafeInt,
  parseLiteral: (ast) => toSafeInt(ast.kind === Kind.INT ? ast.value : undefined),
});
