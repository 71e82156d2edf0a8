/**
 * Worker-thread entry (started from store-service.ts): checkpoints the
 * database's WAL from a connection of its own when asked (store/checkpointer.ts);
 * `close` checkpoints a last time and closes that connection.
 */
import { workerData } from 'node:worker_threads';
import { serveTasks } from '../runtime/index.js';
import { openCheckpointer, type CheckpointResult, type CheckpointTask } from './checkpointer.js';

const checkpointer = openCheckpointer((workerData as { path: string }).path);

serveTasks<CheckpointTask, CheckpointResult>((task) => {
  const result = checkpointer.checkpoint();
  if (task === 'close') checkpointer.close();
  return result;
});
