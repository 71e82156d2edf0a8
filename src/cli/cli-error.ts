/**
 * What the command reports when it cannot do what was asked: a stable code, a
 * message for the operator, and the exit code (sysexits.h) that follows from
 * the code, so scripts can tell "not running" from "wrong token" from "refused".
 */

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 64;
export const EXIT_UNAVAILABLE = 69;
export const EXIT_NOPERM = 77;
export const EXIT_CONFIG = 78;

export type CliErrorCode =
  /** Arguments the command does not understand. */
  | 'USAGE'
  /** The configuration (file or MAILPROXY_* variables) is invalid, or names no way to reach the daemon. */
  | 'CONFIG_INVALID'
  /** Nothing answers at the daemon's URL. */
  | 'UNREACHABLE'
  /** No token was found, or the daemon refused it (401), or it may not do this (403). */
  | 'NO_TOKEN'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  /** The daemon answered with an error of its API (`code: message`). */
  | 'API_ERROR'
  /** A verb acts on one tenant: --tenant was not given and the daemon has none or several. */
  | 'TENANT_REQUIRED'
  /** Something answered that is not mailproxy's API. */
  | 'BAD_RESPONSE'
  /** A backup or restore file failed its checks. */
  | 'BACKUP_INVALID'
  /** restore: the daemon is running, or a database is in the way. */
  | 'DAEMON_RUNNING'
  | 'DATABASE_EXISTS'
  /** A local file could not be read or written. */
  | 'FILE_ERROR'
  /** keys rotate: the keys given or found do not allow it (no key to rotate, the same key again). */
  | 'KEYS_REFUSED';

const EXIT_CODES: Record<CliErrorCode, number> = {
  USAGE: EXIT_USAGE,
  CONFIG_INVALID: EXIT_CONFIG,
  UNREACHABLE: EXIT_UNAVAILABLE,
  NO_TOKEN: EXIT_NOPERM,
  UNAUTHORIZED: EXIT_NOPERM,
  FORBIDDEN: EXIT_NOPERM,
  API_ERROR: EXIT_FAILURE,
  TENANT_REQUIRED: EXIT_USAGE,
  BAD_RESPONSE: EXIT_FAILURE,
  BACKUP_INVALID: EXIT_FAILURE,
  DAEMON_RUNNING: EXIT_FAILURE,
  DATABASE_EXISTS: EXIT_FAILURE,
  FILE_ERROR: EXIT_FAILURE,
  KEYS_REFUSED: EXIT_FAILURE,
};

export interface CliError {
  code: CliErrorCode;
  message: string;
  /** Extra lines (each problem of an invalid configuration, each invalid field). */
  lines?: string[];
}

export const cliError = (code: CliErrorCode, message: string, lines?: string[]): CliError =>
  lines === undefined ? { code, message } : { code, message, lines };

export type Result<T> = { ok: true; value: T } | { ok: false; error: CliError };

export const ok = <T>(value: T): Result<T> => ({ ok: true, value });
export const failed = <T>(error: CliError): Result<T> => ({ ok: false, error });

/** Prints the error on stderr and answers its exit code. */
export function report(stderr: NodeJS.WritableStream, error: CliError): number {
  stderr.write(`mailproxy: ${error.message}\n`);
  for (const line of error.lines ?? []) stderr.write(`  - ${line}\n`);
  return EXIT_CODES[error.code];
}
