import type { OperationReport } from '../admission/operation-report.js';
import { creditLogFields } from '../credits/credit-extensions.js';
import type { Logger } from './create-logger.js';

/**
 * Logs one JSON line per operation (info), from its report, alike for every door: nothing of the
 * caller's key. Its credit figures are read from the operation's `extensions`
 * (`creditLogFields`), so a figure added there is logged too.
 */
export function operationLog(logger: Logger): (report: OperationReport) => void {
  return (report) => {
    if (!logger.isLevelEnabled('info')) return;
    const { creditsUncertain, ...credits } = creditLogFields(report.credits);
    logger.info(
      {
        requestId: report.requestId,
        endpoint: report.endpoint,
        door: report.door,
        operation: report.operation,
        type: report.type ?? undefined,
        status: report.status,
        outcome: report.outcome,
        ms: Math.round(report.ms * 10) / 10,
        ...credits,
        creditsUncertain: creditsUncertain || undefined,
        payloads: report.payloads,
        answered: report.answered || undefined,
        codes: report.codes.length > 0 ? report.codes : undefined,
        traceId: report.traceId,
      },
      'operation',
    );
  };
}
