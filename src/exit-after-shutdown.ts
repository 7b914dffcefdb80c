import { pino } from 'pino';
import type { Logger } from './logging/create-logger.js';

/** How long the log may take to reach its destination once the process has closed. */
const LOG_FLUSH_MS = 1_000;
/** Beyond the grace period, what `shutdown` may still take before the process exits anyway. */
const FAILSAFE_MS = 5_000;

/**
 * Runs `shutdown` on the first SIGTERM or SIGINT (or a call of the function returned), then
 * exits 0. Whatever hangs (a log reader that stopped reading, a connection, a timer, a Redis
 * client), the process exits (1) at `graceMs` plus a few seconds: an orchestrator's kill never
 * has to follow.
 */
export function exitAfterShutdown(
  logger: Logger,
  graceMs: number,
  shutdown: (signal: NodeJS.Signals) => Promise<void>,
): (signal: NodeJS.Signals) => void {
  let started = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (started) return;
    started = true;
    setTimeout(() => exit(logger, 1), graceMs + FAILSAFE_MS).unref();
    void shutdown(signal)
      .catch((error: unknown) => logger.error({ err: error }, 'shutdown failed'))
      .then(() => flushed(logger))
      .then(() => exit(logger, 0));
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  return onSignal;
}

/** Resolves once the log's lines are written, or after {@link LOG_FLUSH_MS} regardless. */
function flushed(logger: Logger): Promise<void> {
  return new Promise((resolve) => {
    setTimeout(resolve, LOG_FLUSH_MS).unref();
    logger.flush(() => resolve());
  });
}

/**
 * Exits with `code`, the log's destination destroyed first (what was flushed is written; what was
 * not is dropped): pino's exit hook writes what is left synchronously, and against a pipe nobody
 * reads (EAGAIN) that write retries forever, so `process.exit` itself never returned.
 */
function exit(logger: Logger, code: number): never {
  const stream = (logger as unknown as Record<symbol, { destroy?: () => void } | undefined>)[
    pino.symbols.streamSym
  ];
  stream?.destroy?.();
  process.exit(code);
}
