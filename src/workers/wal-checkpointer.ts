/**
 * Worker-thread entry (a composition root, like main.ts): checkpoints the
 * database's WAL every `intervalMs` while it grows, less often (up to once a
 * second) while it does not, until told to stop (store/checkpointer.ts).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openCheckpointer } from '../store/checkpointer.js';

const IDLE_INTERVAL_MS = 1000;
const { path, intervalMs } = workerData as { path: string; intervalMs: number };
const checkpointer = openCheckpointer(path);
let delayMs = intervalMs;
let lastFrames = -1;
let timer: NodeJS.Timeout;

const run = (): void => {
  try {
    const { walFrames } = checkpointer.checkpoint();
    // An idle appliance need not wake ten times a second.
    delayMs = walFrames === lastFrames ? Math.min(delayMs * 2, IDLE_INTERVAL_MS) : intervalMs;
    lastFrames = walFrames;
  } catch (error) {
    // A busy or failing checkpoint is retried next time; the writer's own threshold is the backstop.
    parentPort?.postMessage({ error: error instanceof Error ? error.message : String(error) });
  }
  timer = setTimeout(run, delayMs);
};
timer = setTimeout(run, delayMs);

parentPort?.on('message', (message: unknown) => {
  if (message !== 'stop') return;
  clearTimeout(timer);
  checkpointer.checkpoint();
  checkpointer.close();
  parentPort?.close();
});
