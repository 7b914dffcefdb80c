import type { UpstreamObserver } from '../upstream/upstream-observer.js';
import type { Logger } from './create-logger.js';

/** How often the retries of the last interval are logged, by reason. */
const RETRY_REPORT_MS = 10_000;

/**
 * Logs what the upstream pipeline reports: each failed exchange (warn; an abort by the client is
 * debug), each change of the circuit breaker (warn), and the retries of the last 10 s by reason
 * (one warn line per interval, as they come in bursts when the service falters). No key, filter
 * or cursor reaches it: only the endpoint, status, failure and the service's request id.
 */
export function upstreamLog(logger: Logger): { observer: UpstreamObserver; close(): void } {
  const retries = new Map<string, number>();
  const report = setInterval(() => {
    if (retries.size === 0) return;
    logger.warn(
      { retries: Object.fromEntries(retries), seconds: RETRY_REPORT_MS / 1000 },
      'upstream retries',
    );
    retries.clear();
  }, RETRY_REPORT_MS);
  report.unref();
  return {
    observer: {
      exchange(exchange) {
        if (!exchange.failure) return;
        const level = exchange.failure === 'aborted' ? 'debug' : 'warn';
        logger[level](
          {
            endpoint: exchange.endpoint,
            status: exchange.status || undefined,
            failure: exchange.failure,
            ms: Math.round(exchange.seconds * 1000),
            upstreamRequestId: exchange.requestId,
          },
          'upstream request failed',
        );
      },
      retry: (reason) => retries.set(reason, (retries.get(reason) ?? 0) + 1),
      breaker: (state) => logger.warn({ state }, `upstream circuit breaker ${state}`),
    },
    close: () => clearInterval(report),
  };
}
