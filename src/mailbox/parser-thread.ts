/**
 * A mail parser (the bounce one, the PEC receipt one) in a thread of its own,
 * started at its first message: a message it is slow on cannot hold up the
 * daemon, and one it never finishes is abandoned with its thread
 * (worker-pool.ts timeoutMs).
 */
import { setTimeout as delay } from 'node:timers/promises';
import { isAppError, type Logger } from '../core/index.js';
import { createWorkerPool, workerScript, type WorkerPool } from '../runtime/index.js';

export interface ParserThread<T> {
  /** Rejects on the parser's timeout or failure. */
  analyse(raw: Buffer): Promise<T>;
  close(): Promise<void>;
}

const RETRIES = 8;
const RETRY_MS = 250;

/** `script`: the parser's thread entry, as its room names it (`new URL('./bounce-parser.thread.js', import.meta.url)`). */
export function createParserThread<T>(options: {
  script: URL;
  name: string;
  timeoutMs: number;
  log: Logger;
}): ParserThread<T> {
  let pool: WorkerPool<Uint8Array, T> | null = null;
  return {
    async analyse(raw) {
      pool ??= createWorkerPool({
        script: workerScript(options.script),
        size: 1,
        name: options.name,
        log: options.log,
      });
      for (let attempt = 1; ; attempt += 1) {
        try {
          return await pool.run(raw, [], undefined, { timeoutMs: options.timeoutMs });
        } catch (error) {
          // The thread is being replaced (after another message's timeout): wait for it rather than
          // failing this message, which would be filed unmatched for no fault of its own.
          if (!isAppError(error) || !error.transient || attempt >= RETRIES) throw error;
          await delay(RETRY_MS * attempt);
        }
      }
    },
    async close() {
      await pool?.close();
      pool = null;
    },
  };
}
