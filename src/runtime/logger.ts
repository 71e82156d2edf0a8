/**
 * pino, with secrets redacted by path wherever they might appear in a log
 * object. Logs are JSON lines on stdout (or a given stream, for tests).
 */
import { pino, type DestinationStream } from 'pino';
import type { Logger } from '../core/index.js';

const SECRET_FIELDS = [
  'password',
  'token',
  'api_key',
  'apiKey',
  'admin_token',
  'metrics_token',
  'metricsToken',
  'secret_key',
  'previous_secret_keys',
  'client_auth',
  'clientAuth',
  'authorization',
];

/** Redaction paths: each secret field at the top and up to two levels deep, plus request headers. */
export const REDACT_PATHS = [
  ...SECRET_FIELDS,
  ...SECRET_FIELDS.map((field) => `*.${field}`),
  ...SECRET_FIELDS.map((field) => `*.*.${field}`),
  'req.headers.authorization',
  'req.headers["x-api-token"]',
  'req.headers.cookie',
];

export interface LoggerOptions {
  level: string;
  destination?: DestinationStream;
}

export interface RuntimeLogger extends Logger {
  /** Writes buffered lines out; call before the process exits. */
  flush(): void;
}

export function createLogger(options: LoggerOptions): RuntimeLogger {
  return pino(
    {
      level: options.level,
      base: { service: 'mailproxy' },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    options.destination ?? pino.destination({ fd: 1, sync: false }),
  ) as unknown as RuntimeLogger;
}
