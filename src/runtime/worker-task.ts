/**
 * The worker side of worker-pool.ts: a task module calls `serveTasks` with its
 * handler; every request is answered with its output or its error text. Log
 * lines travel to the main thread's logger (`threadLogger`), so that a worker
 * writes through the same redaction and destination as everything else.
 */
import { parentPort } from 'node:worker_threads';
import { type Logger, errorText } from '../core/index.js';
import { endOfTurn } from './end-of-turn.js';

export interface TaskRequest<In> {
  id: number;
  input: In;
}

export type TaskReply<Out> = { id: number; ok: true; output: Out } | { id: number; ok: false; error: string };

/** A log line from a worker, written by the pool to its logger. */
export interface LogRecord {
  log: { level: LogLevel; fields: Record<string, unknown>; message: string };
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'fatal';
const LEVELS: readonly string[] = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

function port() {
  if (parentPort === null) throw new Error('this module runs inside a worker thread');
  return parentPort;
}

/**
 * Answers the pool's tasks. Requests arrive in batches (worker-pool.ts); the
 * answers finished in the same turn leave together too: every message between
 * threads wakes the other side, which costs a system call.
 */
export function serveTasks<In, Out>(handle: (input: In) => Out | Promise<Out>): void {
  const parent = port();
  const answer = endOfTurn<TaskReply<Out>>((replies) => parent.postMessage(replies));
  const failure = (id: number, error: unknown): TaskReply<Out> => ({ id, ok: false, error: errorText(error) });

  parent.on('message', (requests: Array<TaskRequest<In>>) => {
    for (const request of requests) {
      try {
        const output = handle(request.input);
        if (output instanceof Promise) {
          output.then(
            (value: Out) => answer({ id: request.id, ok: true, output: value }),
            (error: unknown) => answer(failure(request.id, error)),
          );
        } else {
          answer({ id: request.id, ok: true, output });
        }
      } catch (error) {
        answer(failure(request.id, error));
      }
    }
  });
}

/** A Logger whose lines at or above `level` are sent to the main thread. */
export function threadLogger(level: string, bindings: Record<string, unknown> = {}): Logger {
  return forwardingLogger(level, (record) => port().postMessage(record), bindings);
}

/** A Logger whose lines at or above `level` are handed to `send` (a thread's or a process's channel). */
export function forwardingLogger(
  level: string,
  send: (record: LogRecord) => void,
  bindings: Record<string, unknown> = {},
): Logger {
  const threshold = Math.max(0, LEVELS.indexOf(level));
  const at =
    (name: LogLevel) =>
    (first: Record<string, unknown> | string, message?: string): void => {
      if (LEVELS.indexOf(name) < threshold) return;
      const fields = typeof first === 'string' ? bindings : { ...bindings, ...cloneable(first) };
      send({ log: { level: name, fields, message: typeof first === 'string' ? first : (message ?? '') } });
    };
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    fatal: at('fatal'),
    child: (more) => forwardingLogger(level, send, { ...bindings, ...more }),
  } as Logger;
}

/** Errors cross threads as their message, code and stack (their other properties may not clone). */
function cloneable(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    out[key] =
      value instanceof Error
        ? { type: value.name, message: value.message, code: (value as { code?: unknown }).code, stack: value.stack }
        : value;
  }
  return out;
}
