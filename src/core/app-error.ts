/**
 * AppError: the one serializable error of the product. Expected failures are
 * data with a stable code; HTTP statuses and SMTP replies are chosen at the edges.
 */

export type ErrorCode =
  | 'VALIDATION_FAILED'
  | 'INVALID_JSON'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'CONFLICT'
  | 'AUTH_THROTTLED'
  | 'CONFIG_INVALID'
  | 'STORE_UNAVAILABLE'
  /** A part of the daemon (a worker thread) is restarting: retry shortly. */
  | 'UNAVAILABLE'
  | 'ATTACHMENT_UNAVAILABLE'
  | 'INTERNAL';

/** JSON-safe detail payload: survives every hop (logs, HTTP bodies, events). */
export type ErrorDetails = Record<string, unknown> | readonly unknown[] | undefined;

export interface AppErrorOptions {
  details?: ErrorDetails;
  /** True when retrying the same operation later may succeed. */
  transient?: boolean;
  cause?: unknown;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails;
  readonly transient: boolean;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.details = options.details;
    this.transient = options.transient ?? false;
  }

  toJSON(): { code: ErrorCode; message: string; details: ErrorDetails; transient: boolean } {
    return { code: this.code, message: this.message, details: this.details, transient: this.transient };
  }
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}

export const notFound = (what: string, id: string): AppError =>
  new AppError('NOT_FOUND', `${what} not found`, { details: { [what]: id } });
