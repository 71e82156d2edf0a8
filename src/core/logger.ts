/**
 * The logging port: constant message, variable data in fields. The runtime
 * provides pino; other rooms depend only on this shape.
 */
export interface LogFn {
  (fields: Record<string, unknown>, message: string): void;
  (message: string): void;
}

export interface Logger {
  fatal: LogFn;
  error: LogFn;
  warn: LogFn;
  info: LogFn;
  debug: LogFn;
  child(bindings: Record<string, unknown>): Logger;
}
