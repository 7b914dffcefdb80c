import type { Kind } from './setting.js';

/** A bound of a range: a number, or the variable of another integer setting, read at boot. */
export type Bound = number | string;

/** An integer from `min` to `max` inclusive, e.g. `integer(1, 'MAX_PAGE_SIZE')`. */
export function integer(min: Bound, max: Bound): Kind<number> {
  return {
    parse(raw, valueOf) {
      const low = typeof min === 'number' ? min : (valueOf(min) as number);
      const high = typeof max === 'number' ? max : (valueOf(max) as number);
      const value = Number(raw);
      if (!Number.isInteger(value) || value < low || value > high) {
        const range = `${showBound(min, low)} to ${showBound(max, high)}`;
        throw new Error(`must be an integer from ${range} (got "${raw}")`);
      }
      return value;
    },
  };
}

function showBound(bound: Bound, value: number): string {
  return typeof bound === 'number' ? `${value}` : `${bound} (${value})`;
}

/** Any text, without surrounding whitespace unless `trim` is false. */
export function string({ trim = true } = {}): Kind<string> {
  return { parse: (raw) => (trim ? raw.trim() : raw) };
}

/**
 * An absolute URL with one of `protocols` (default http and https). `quiet` keeps the value out
 * of the error message, for a URL that may hold a password.
 */
export function url({
  protocols = ['http:', 'https:'],
  quiet = false,
}: { protocols?: string[]; quiet?: boolean } = {}): Kind<string> {
  const names = protocols.map((protocol) => protocol.slice(0, -1)).join(' or ');
  return {
    parse(raw) {
      const value = raw.trim();
      let parsed: URL;
      try {
        parsed = new URL(value);
      } catch {
        throw new Error(`must be an absolute ${names} URL${quiet ? '' : ` (got "${value}")`}`);
      }
      if (!protocols.includes(parsed.protocol)) {
        throw new Error(`must use ${names} (got "${parsed.protocol}")`);
      }
      return value;
    },
  };
}

/** `true` or `false`. */
export function boolean(): Kind<boolean> {
  return {
    parse(raw) {
      const value = raw.trim();
      if (value !== 'true' && value !== 'false') {
        throw new Error(`must be true or false (got "${raw}")`);
      }
      return value === 'true';
    },
  };
}

/** One of `values`, e.g. `oneOf('debug', 'info', 'warn', 'error')`. */
export function oneOf<const T extends string>(...values: T[]): Kind<T> {
  return {
    parse(raw) {
      const value = raw.trim();
      if (!(values as string[]).includes(value)) {
        throw new Error(`must be one of ${values.join(', ')} (got "${raw}")`);
      }
      return value as T;
    },
  };
}

/** A comma-separated list, each item trimmed and read as `item`; empty items are dropped. */
export function list<T = string>(item: Kind<T> = string() as Kind<T>): Kind<T[]> {
  return {
    parse: (raw, valueOf) =>
      raw
        .split(',')
        .filter((part) => part.trim() !== '')
        .map((part) => item.parse(part.trim(), valueOf)),
  };
}

/** An integer from `min` to `max`, or `auto` for the value `auto()` returns then. */
export function integerOrAuto(min: number, max: number, auto: () => number): Kind<number> {
  const exact = integer(min, max);
  return {
    parse(raw, valueOf) {
      if (raw.trim() === 'auto') return auto();
      try {
        return exact.parse(raw, valueOf);
      } catch {
        throw new Error(`must be auto or an integer from ${min} to ${max} (got "${raw}")`);
      }
    },
  };
}

/** A web origin (`https://app.example.com`, `http://localhost:3000`), or `*` for any. */
export function origin(): Kind<string> {
  return {
    parse(raw) {
      const value = raw.trim();
      if (value === '*') return value;
      let parsed: URL | undefined;
      try {
        parsed = new URL(value);
      } catch {
        parsed = undefined;
      }
      if (
        !parsed ||
        !['http:', 'https:'].includes(parsed.protocol) ||
        parsed.origin !== value.replace(/\/$/, '')
      ) {
        throw new Error(`must be * or origins such as https://app.example.com (got "${value}")`);
      }
      return parsed.origin;
    },
  };
}
