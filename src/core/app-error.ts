/**
 * AppError: the one serializable error of the product. Expected failures are
 * data with a stable code; HTTP statuses and SMTP replies are chosen at the edges.
 * The codes here are the domain's; an edge adds its own (ingress/http's transport
 * codes: a body that is not JSON) without core knowing them.
 */

export type ErrorCode =
  | 'VALIDATION_FAILED'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'AUTH_THROTTLED'
  | 'CONFIG_INVALID'
  | 'STORE_UNAVAILABLE'
  /** A part of the daemon (a worker thread) is restarting: retry shortly. */
  | 'UNAVAILABLE'
  | 'ATTACHMENT_UNAVAILABLE'
  /** This fleet node is draining: submit to another node. */
  | 'NODE_DRAINING'
  /** Fleet mode: the shared configuration moved since this node read it (another node's edit won). */
  | 'CONFIG_CONFLICT'
  /** Fleet mode: the cluster cannot be reached, so a configuration change cannot be shared; mail still flows. */
  | 'FLEET_UNAVAILABLE'
  | 'INTERNAL';

/** JSON-safe detail payload: survives every hop (logs, HTTP bodies, events). */
export type ErrorDetails = Record<string, unknown> | readonly unknown[] | undefined;

export interface AppErrorOptions {
  details?: ErrorDetails;
  /** True when retrying the same operation later may succeed. */
  transient?: boolean;
  cause?: unknown;
}

/** `Code` is widened only by an edge, for codes that only it can produce. */
export class AppError<Code extends string = ErrorCode> extends Error {
  readonly code: Code;
  readonly details: ErrorDetails;
  readonly transient: boolean;

  // NoInfer: `new AppError('TYPO', ...)` must not invent a code; an edge names its type.
  constructor(code: NoInfer<Code>, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.details = options.details;
    this.transient = options.transient ?? false;
  }

  toJSON(): { code: Code; message: string; details: ErrorDetails; transient: boolean } {
    return { code: this.code, message: this.message, details: this.details, transient: this.transient };
  }
}

/** An error's text, whatever was thrown: what a log line, a status field or a reply across threads carries. */
export const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error));

export function isAppError(value: unknown): value is AppError<string> {
  return value instanceof AppError;
}

export const notFound = (what: string, id: string): AppError =>
  new AppError('NOT_FOUND', `${what} not found`, { details: { [what]: id } });
