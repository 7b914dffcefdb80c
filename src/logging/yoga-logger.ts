import { GraphQLError } from 'graphql';
import type { YogaLogger } from 'graphql-yoga';
import { UpstreamError } from '../upstream/upstream-error.js';
import type { Logger } from './create-logger.js';

/** An error the gateway answers with a code of its own: an upstream failure, already logged. */
function isExpected(error: unknown): boolean {
  const original = error instanceof GraphQLError ? error.originalError : error;
  return original instanceof UpstreamError;
}

/**
 * Yoga's own log calls, through pino. Yoga logs every error it masks at error level; an upstream
 * failure is masked to its coded GraphQL error and logged by the upstream log already, so it goes
 * to debug here. Anything else it masks is a defect: error, with its stack.
 */
export function yogaLogger(logger: Logger): YogaLogger {
  const write =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (...args: unknown[]) => {
      // Yoga logs at debug a few times per request: nothing is built unless the level is on.
      if (!logger.isLevelEnabled(level === 'error' ? 'debug' : level)) return;
      const [first, ...rest] = args;
      if (first instanceof Error) {
        const at = level === 'error' && isExpected(first) ? 'debug' : level;
        logger[at]({ err: first }, first.message);
      } else {
        logger[level]({ args: rest.length ? rest : undefined }, String(first));
      }
    };
  return { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') };
}
