import type { OperationReport } from '../plugins/use-operation-report.js';
import type { Logger } from './create-logger.js';

/** Logs one JSON line per GraphQL request (info), from its report: nothing of the caller's key. */
export function operationLog(logger: Logger): (report: OperationReport) => void {
  return (report) => {
    if (!logger.isLevelEnabled('info')) return;
    logger.info(
      {
        requestId: report.requestId,
        endpoint: report.endpoint,
        operation: report.operation,
        status: report.status,
        outcome: report.outcome,
        ms: Math.round(report.ms * 10) / 10,
        upstreamRequests: report.upstreamRequests,
        upstreamRetries: report.upstreamRetries,
        creditsUsed: report.creditsUsed,
        creditsSaved: report.creditsSaved,
        creditsUncertain: report.creditsUncertain || undefined,
        creditsEstimate: report.creditsEstimate,
        stale: report.stalePages || undefined,
        answered: report.answered || undefined,
        codes: report.codes.length > 0 ? report.codes : undefined,
        traceId: report.traceId,
      },
      'operation',
    );
  };
}
