/**
 * Error codes that only HTTP can produce: the request's transport (its method,
 * media type, size, JSON syntax), not the domain. Core's ErrorCode does not know them.
 */
import { AppError, type AppErrorOptions, type ErrorCode } from '../../core/index.js';

/**
 * WEBHOOK_UNVERIFIED: a provider's webhook whose signature (or credentials) did not verify.
 * GONE: an offloaded attachment's link that expired, or whose message was erased (routes/files.ts).
 * RANGE_NOT_SATISFIABLE: a download's Range outside the file.
 */
export type TransportErrorCode =
  | 'INVALID_JSON'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'PAYLOAD_TOO_LARGE'
  | 'METHOD_NOT_ALLOWED'
  | 'WEBHOOK_UNVERIFIED'
  | 'GONE'
  | 'RANGE_NOT_SATISFIABLE';

/** Every code an HTTP error envelope may carry. */
export type HttpErrorCode = ErrorCode | TransportErrorCode;

/** An AppError whose code may be a transport code; the error envelope answers either. */
export type HttpError = AppError<HttpErrorCode>;

export function transportError(code: TransportErrorCode, message: string, options?: AppErrorOptions): HttpError {
  return new AppError<HttpErrorCode>(code, message, options);
}
