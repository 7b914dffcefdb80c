import { createLogger, type Logger } from '../../src/logging/create-logger.js';

/** One JSON line the gateway logged, parsed. */
export type LogLine = Record<string, unknown> & { level: string; msg: string };

/** A logger as main.ts makes it (JSON, redaction), writing into an array instead of stdout. */
export function captureLog(level = 'debug'): { logger: Logger; lines: LogLine[]; text(): string } {
  const raw: string[] = [];
  const lines: LogLine[] = [];
  const logger = createLogger(level, {
    write(line: string) {
      raw.push(line);
      lines.push(JSON.parse(line) as LogLine);
    },
  });
  return { logger, lines, text: () => raw.join('') };
}
