/**
 * Worker-thread entry (a composition root, like main.ts): checkpoints the
 * database's WAL every `intervalMs` until told to stop (store/checkpointer.ts).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openCheckpointer } from '../store/checkpointer.js';

const { path, intervalMs } = workerData as { path: string; intervalMs: number };
const checkpointer = openCheckpointer(path);
const timer = setInterval(() => {
  try {
    checkpointer.checkpoint();
  } catch (error) {
    // A busy or failing checkpoint is retried next time; the writer's own threshold is the backstop.
    parentPort?.postMessage({ error: error instanceof Error ? error.message : String(error) });
  }
}, intervalMs);

parentPort?.on('message', (message: unknown) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  checkpointer.checkpoint();
  checkpointer.close();
  parentPort?.close();
});
