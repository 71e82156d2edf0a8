/**
 * The mirror's wire side in a thread of its own (mirror-publisher.thread.ts):
 * each window crosses once each way, its event bodies copied (a few hundred
 * bytes each). A thread stuck past the publish timeout is replaced, and its
 * window fails like any other, to be published again after the backoff.
 */
import { type Logger, errorText } from '../core/index.js';
import { createWorkerPool, workerScript } from '../runtime/index.js';
import type { MirrorWindow, WindowOutcome, WindowPublisher, WindowSettings } from './window-publisher.js';

export interface MirrorThreadData {
  url: string;
  settings: WindowSettings;
  logLevel: string;
}

export type MirrorThreadTask = { kind: 'window'; window: MirrorWindow } | { kind: 'close'; withinMs: number };

/** Beyond the publish timeout (the thread's own PubAck deadline): how long before the thread is taken to be stuck. */
const STUCK_MARGIN_MS = 5000;
/** Beyond a close's own budget: for the thread to answer that it closed. */
const CLOSE_MARGIN_MS = 200;

export function createThreadedWindowPublisher(data: MirrorThreadData, log: Logger): WindowPublisher {
  const pool = createWorkerPool<MirrorThreadTask, WindowOutcome | null>({
    script: workerScript(new URL('./mirror-publisher.thread.js', import.meta.url)),
    size: 1,
    name: 'mirror-publisher',
    log,
    data,
  });
  const timeoutMs = data.settings.publishTimeoutMs + STUCK_MARGIN_MS;
  return {
    async publish(window) {
      try {
        return (await pool.run({ kind: 'window', window }, [], undefined, { timeoutMs })) as WindowOutcome;
      } catch (error) {
        return { acknowledged: 0, error: errorText(error) };
      }
    },
    close: (withinMs) => pool.close({ kind: 'close', withinMs }, withinMs + CLOSE_MARGIN_MS),
  };
}
