import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger } from 'pino';

/**
 * Paths pino censors in anything logged. The gateway logs no key by design (no headers, no
 * context, no request); these catch a mistake before it reaches a log.
 */
export const REDACTED_PATHS = [
  'apiKey',
  '*.apiKey',
  'key',
  '*.key',
  'headers["x-api-key"]',
  '*.headers["x-api-key"]',
  'headers.authorization',
  '*.headers.authorization',
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
