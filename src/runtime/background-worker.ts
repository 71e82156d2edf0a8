/**
 * A worker thread that runs a loop of its own (the WAL checkpointer): started
 * once, started again if it dies, asked to stop (the message `stop`) and given
 * `stopTimeoutMs` to finish before it is terminated.
 */
import { Worker } from 'node:worker_threads';
import type { Logger } from '../core/logger.js';

export interface BackgroundWorker {
  stop(stopTimeoutMs?: number): Promise<void>;
}

export function startBackgroundWorker(options: { script: URL; name: string; data: unknown; log: Logger; respawnPauseMs?: number }): BackgroundWorker {
  let stopping = false;
  let worker: Worker;

  const spawn = (): void => {
    const startedAt = Date.now();
    worker = new Worker(options.script, { workerData: options.data, name: options.name });
    worker.on('message', (message: { error?: string }) => {
      if (message.error !== undefined) options.log.warn({ error: message.error }, `${options.name}: ${message.error}`);
    });
    worker.on('error', (error) => options.log.error({ err: error }, `${options.name} failed`));
    worker.on('exit', (code) => {
      if (stopping) return;
      options.log.warn({ code }, `${options.name} exited; starting another`);
      // One that dies right after starting would otherwise be restarted in a tight loop.
      if (Date.now() - startedAt >= 5000) spawn();
      else setTimeout(() => stopping || spawn(), options.respawnPauseMs ?? 1000).unref();
    });
  };
  spawn();

  return {
    async stop(stopTimeoutMs = 2000) {
      stopping = true;
      if (worker.threadId === -1) return; // died, and its replacement is not started
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      worker.postMessage('stop');
      const timer = setTimeout(() => void worker.terminate(), stopTimeoutMs);
      await exited;
      clearTimeout(timer);
    },
  };
}
