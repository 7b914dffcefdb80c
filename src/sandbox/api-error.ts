/** The error codes the sandbox answers with: the spec's five plus NOT_FOUND, METHOD_NOT_ALLOWED and INTERNAL_ERROR. */
export type ErrorCode =
  | 'INVALID_INPUT'
  | 'UNAUTHORIZED'
  | 'PAYMENT_REQUIRED'
  | 'FORBIDDEN'
  | 'TOO_MANY_REQUESTS'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'INTERNAL_ERROR';

/** The HTTP status of each error code. */
export const ERROR_STATUS: Readonly<Record<ErrorCode, number>> = {
  INVALID_INPUT: 400,
  UNAUTHORIZED: 401,
  PAYMENT_REQUIRED: 402,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  TOO_MANY_REQUESTS: 429,
  INTERNAL_ERROR: 500,
};

/**
 * A failure the sandbox reports in the spec's error envelope. `retryAfterSeconds`
 * becomes the `Retry-After` header (TOO_MANY_REQUESTS only).
 */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly retryAfterSeconds: number | undefined;

  constructor(code: ErrorCode, message: string, retryAfterSeconds?: number) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** Quotes a caller-supplied value for an error message, cut to a readable length. */
export function quote(value: string): string {
  return JSON.stringify(value.length > 64 ? `${value.slice(0, 61)}...` : value);
}
