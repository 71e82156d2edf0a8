/**
 * AppError -> HTTP. The status is chosen here and only here; the body is always
 * `{"error":{"code","message","details"}}`. Anything that is not an AppError is
 * a bug: logged with its stack, answered as a bare 500 that reveals nothing.
 */
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { AppError, type Logger } from '../../core/index.js';
import type { HttpError, HttpErrorCode } from './http-error.js';

const STATUS: Record<HttpErrorCode, ContentfulStatusCode> = {
  VALIDATION_FAILED: 400,
  INVALID_JSON: 400,
  UNAUTHORIZED: 401,
  WEBHOOK_UNVERIFIED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  GONE: 410,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RANGE_NOT_SATISFIABLE: 416,
  AUTH_THROTTLED: 429,
  CONFIG_INVALID: 500,
  INTERNAL: 500,
  STORE_UNAVAILABLE: 503,
  UNAVAILABLE: 503,
  NODE_DRAINING: 503,
  ATTACHMENT_UNAVAILABLE: 502,
  CONFIG_CONFLICT: 409,
  FLEET_UNAVAILABLE: 503,
};

/** Every stable error code, for the error envelope's documentation. */
export const ERROR_CODES = Object.keys(STATUS) as HttpErrorCode[];

export function statusOf(code: HttpErrorCode): ContentfulStatusCode {
  return STATUS[code];
}

export function errorResponse(c: Context, error: HttpError): Response {
  if (error.code === 'UNAUTHORIZED') c.header('WWW-Authenticate', 'Bearer realm="mailproxy"');
  if (
    error.code === 'AUTH_THROTTLED' ||
    error.code === 'STORE_UNAVAILABLE' ||
    error.code === 'UNAVAILABLE' ||
    error.code === 'NODE_DRAINING' ||
    error.code === 'FLEET_UNAVAILABLE'
  ) {
    const details = error.details as { retry_after_seconds?: number } | undefined;
    c.header('Retry-After', String(details?.retry_after_seconds ?? 5));
  }
  return c.json(
    { error: { code: error.code, message: error.message, details: error.details ?? null } },
    statusOf(error.code),
  );
}

export function createErrorHandler(log: Logger) {
  return (error: Error, c: Context): Response => {
    if (error instanceof AppError) return errorResponse(c, error as HttpError);
    // The route's pattern, not the path: a path may name a person (DELETE /suppression/{address}).
    log.error({ err: error, method: c.req.method, route: c.req.routePath }, 'request failed with an unexpected error');
    return errorResponse(c, new AppError('INTERNAL', 'internal error; the request was not applied'));
  };
}
