import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger } from 'pino';

/**
 * Paths pino censors in anything logged. The gateway logs no key by design (no headers, no
 * context, no request); these catch a mistake before it reaches a log. Explicit paths, no
 * wildcards: a wildcard tripled the cost of every line (4 → 14 µs).
 */
export const REDACTED_PATHS = [
  'apiKey',
  'key',
  'headers["x-api-key"]',
  'headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'request.apiKey',
  'request.headers["x-api-key"]',
  'request.headers.authorization',
  'err.apiKey',
];

/**
 * The gateway's logger: JSON lines (pino) at `level`, on stdout unless `destination` is given
 * (tests capture it), with an ISO time and the keys above censored.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
}

/** A logger that writes nothing: the default of an app built without one (tests). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
