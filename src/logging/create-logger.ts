import { fstatSync } from 'node:fs';
import { Socket } from 'node:net';
import { pino, type DestinationStream, type Logger } from 'pino';
import { isoTime } from './iso-time.js';

export type { Logger } from 'pino';

/**
 * Paths pino censors in anything logged. The gateway logs no key by design (no headers, no
 * context, no request); these catch a mistake before it reaches a log. Explicit paths, no
 * wildcards: a wildcard tripled the cost of every line (4 → 14 µs).
 */
export const REDACTED_PATHS = [
  'apiKey',
  'key',
  'token',
  'upstreamKey',
  'headers["x-api-key"]',
  'headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'request.apiKey',
  'request.headers["x-api-key"]',
  'request.headers.authorization',
  'err.apiKey',
];

/** How long a line may wait for the others of its moment, to leave with them in one write. */
const LINES_HELD_MS = 10;

/** Lines waiting for a slow stdout reader, at most; past it, new lines are dropped. */
const STDOUT_BUFFER_BYTES = 16 * 1024 * 1024;

/**
 * Standard output as a log destination that can never stop the gateway. On a pipe or a socket
 * (a supervisor, a container runtime) lines go through a non-blocking handle: a reader that stops
 * reading leaves them queued, up to {@link STDOUT_BUFFER_BYTES} and then dropped, and one that is
 * gone (EPIPE) drops them. Written with a blocking `write(2)`, as pino's default does (and its
 * asynchronous mode too, on a worker thread that `process.exit` then waits for), a full pipe
 * stopped the event loop, SIGTERM included, or the exit itself. A file or a terminal is written
 * synchronously, as pino does.
 */
export function stdoutDestination(): DestinationStream {
  const { isFIFO, isSocket } = (() => {
    try {
      const stat = fstatSync(1);
      return { isFIFO: stat.isFIFO(), isSocket: stat.isSocket() };
    } catch {
      return { isFIFO: false, isSocket: false };
    }
  })();
  if (!isFIFO && !isSocket) return pino.destination({ dest: 1, sync: true });
  const socket = new Socket({ fd: 1, readable: false, writable: true });
  socket.on('error', () => {});
  // The lines of up to LINES_HELD_MS leave in one write(2): a write per line cost the gateway
  // more than the line itself (BENCHMARKS.md, issue 39).
  let held: NodeJS.Timeout | undefined;
  const release = () => {
    clearTimeout(held);
    held = undefined;
    socket.uncork();
  };
  return {
    write(line: string) {
      if (socket.destroyed || socket.writableLength >= STDOUT_BUFFER_BYTES) return;
      if (held === undefined) {
        socket.cork();
        held = setTimeout(release, LINES_HELD_MS);
      }
      socket.write(line);
    },
    // Called by `logger.flush(callback)` at shutdown.
    flush(callback: (error?: Error) => void) {
      if (held !== undefined) release();
      if (socket.writableLength === 0 || socket.destroyed) callback();
      else socket.once('drain', () => callback());
    },
  } as DestinationStream;
}

/**
 * The gateway's logger: JSON lines (pino) at `level`, on {@link stdoutDestination} unless
 * `destination` is given (tests capture it), with an ISO time and the keys above censored.
 */
export function createLogger(
  level: string,
  destination: DestinationStream = stdoutDestination(),
): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      timestamp: isoTime,
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
