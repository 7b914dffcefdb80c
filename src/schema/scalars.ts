import { Kind, type ValueNode } from 'graphql';
import { ErrorCode, gatewayError } from '../errors.js';
import { builder } from './builder.js';

const ISO_8601 =
  /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):?(\d{2})))?$/i;

function invalid(message: string) {
  return gatewayError(ErrorCode.INVALID_INPUT, message);
}

function daysIn(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** Whether the fields matched by ISO_8601 name a real date, time of day and zone offset. */
function exists(match: RegExpExecArray): boolean {
  const field = (index: number) => Number(match[index] ?? 0);
  const [year, month, day] = [field(1), field(2), field(3)];
  const [hour, minute, second] = [field(4), field(5), field(6)];
  const [offsetHours, offsetMinutes] = [field(7), field(8)];
  return (
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysIn(year, month) &&
    hour <= 23 &&
    minute <= 59 &&
    second <= 59 &&
    offsetMinutes <= 59 &&
    offsetHours * 60 + offsetMinutes <= 14 * 60
  );
}

/**
 * Accepts an ISO-8601 date or date-time and returns it unchanged; throws INVALID_INPUT. The date,
 * the time of day and the zone offset (at most ±14:00) must exist: `Date.parse` alone would roll
 * "2024-04-31" over to May 1st and take hour 24 as the next day.
 */
export function parseDateTime(value: unknown): string {
  const match = typeof value === 'string' ? ISO_8601.exec(value) : null;
  if (!match || !exists(match) || Number.isNaN(Date.parse(value as string))) {
    throw invalid(
      `DateTime must be an ISO-8601 date or date-time such as "2024-05-01T12:00:00.000Z" (got ${JSON.stringify(value)})`,
    );
  }
  return value as string;
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

builder.scalarType('JSON', {
  description:
    "Any JSON value (an alert's variables), written as it is: an object, a list, a string, a number, a boolean or null.",
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: (node) => literalValue(node),
});

/** The JSON value of a literal written in a document (variables inside it are refused). */
function literalValue(node: ValueNode): unknown {
  switch (node.kind) {
    case Kind.NULL:
      return null;
    case Kind.INT:
    case Kind.FLOAT:
      return Number(node.value);
    case Kind.STRING:
    case Kind.ENUM:
      return node.value;
    case Kind.BOOLEAN:
      return node.value;
    case Kind.LIST:
      return node.values.map(literalValue);
    case Kind.OBJECT:
      return Object.fromEntries(
        node.fields.map((field) => [field.name.value, literalValue(field.value)]),
      );
    default:
      throw invalid(
        'A JSON value written in the document cannot hold a variable: pass the whole value as a variable instead.',
      );
  }
}
