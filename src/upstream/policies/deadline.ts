import type { OperationDeadline } from '../operation-deadline.js';
import { requestWith, type UpstreamPolicy } from '../upstream-call.js';

/**
 * The operation's deadline (`OPERATION_TIMEOUT_MS`) and the client's going away: the call gets
 * the operation's signal, which aborts it and every other request of the operation, and the
 * deadline's time (`request.deadline`, which no wait should outlast). A call that fails once the
 * deadline has passed fails OPERATION_TIMEOUT. The first call starts the deadline.
 */
export function deadline(operation: OperationDeadline): UpstreamPolicy {
  const failed = (error: unknown) => {
    throw operation.passed() ?? error;
  };
  return (next) => (request) => {
    const signal = operation.signal();
    return next(requestWith(request, { signal, deadline: operation.at })).catch(failed);
  };
}
