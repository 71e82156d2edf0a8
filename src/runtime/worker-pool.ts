/**
 * A small pool of worker threads running one task module (see worker-task.ts).
 * CPU-heavy, stateless work (parsing and validating a submission) leaves the
 * main thread, which keeps SQLite, the dispatcher and the sockets.
 *
 * A task goes to the worker with the fewest tasks in hand. Tasks sent in the
 * same turn travel as one message (and are answered likewise): each message
 * wakes the other thread, a system call, and under load that was most of the
 * cost of a hop. A worker that dies fails only its own tasks (as transient
 * errors: the caller may retry) and is replaced; `close()` stops them all.
 */
import type { Transferable } from 'node:worker_threads';
import { AppError, type Logger } from '../core/index.js';
import { within } from './within.js';
import { WorkerSlot } from './worker-slot.js';

export interface WorkerPool<In, Out> {
  /**
   * Runs a task. Tasks of the same `affinity` always go to the same worker (a
   * worker keeping per-key state, such as an account's relay connections).
   */
  run(input: In, transfer?: readonly Transferable[], affinity?: string, options?: RunOptions): Promise<Out>;
  /** Runs a task on every worker; answers those that answered (a worker being replaced is left out). */
  broadcast(input: In): Promise<Out[]>;
  /** Tasks sent and not yet answered, over all workers. */
  pending(): number;
  /** Every worker is running (none is being replaced). */
  ready(): boolean;
  /** Stops the workers; `farewell`, when given, is run on each first (bounded by `timeoutMs`). */
  close(farewell?: In, timeoutMs?: number): Promise<void>;
}

export interface RunOptions {
  /**
   * A task not answered within this long is rejected (AppError UNAVAILABLE,
   * details.timed_out) and its worker terminated and replaced: work stuck in
   * synchronous code cannot be interrupted any other way. Tasks sharing that
   * worker fail as transient.
   */
  timeoutMs?: number;
}

export interface WorkerPoolOptions {
  /** The task module (compiled JavaScript). */
  script: URL;
  size: number;
  name: string;
  log: Logger;
  /** Passed to every worker as `workerData`. */
  data?: unknown;
  /** The pause before replacing a worker that died young (default 1 s); its tasks are refused meanwhile. */
  respawnPauseMs?: number;
}

/** A worker (or process) that dies this soon after starting is replaced only after a pause, not in a tight loop. */
const YOUNG_MS = 5000;

/** How long to wait before replacing what started at `startedAt` and died now: 0, or `pauseMs` when it died young. */
export function respawnPause(startedAt: number, pauseMs = 1000): number {
  return Date.now() - startedAt >= YOUNG_MS ? 0 : pauseMs;
}

export function createWorkerPool<In, Out>(options: WorkerPoolOptions): WorkerPool<In, Out> {
  if (options.size < 1) throw new Error('a worker pool needs at least one worker');
  let nextTaskId = 1;
  let closing = false;
  const slots: WorkerSlot[] = [];

  const spawn = (index: number): void => {
    const slot: WorkerSlot = new WorkerSlot(options, index, (code) => {
      if (closing || slots[index] !== slot) return;
      options.log.warn({ worker: index, code }, `${options.name} worker exited; starting another`);
      const pauseMs = respawnPause(slot.startedAt, options.respawnPauseMs);
      if (pauseMs === 0) spawn(index);
      else setTimeout(() => closing || spawn(index), pauseMs).unref();
    });
    slots[index] = slot;
  };
  for (let index = 0; index < options.size; index += 1) spawn(index);

  const leastBusy = (): WorkerSlot => {
    let slot = slots[0] as WorkerSlot;
    for (const candidate of slots) if (candidate.pending < slot.pending) slot = candidate;
    return slot;
  };

  const send = (slot: WorkerSlot, input: In, transfer: readonly Transferable[], timeoutMs?: number): Promise<Out> => {
    if (!slot.alive)
      return Promise.reject(new AppError('UNAVAILABLE', `${options.name} worker is restarting`, { transient: true }));
    return slot.send(nextTaskId++, input, transfer, timeoutMs) as Promise<Out>;
  };

  return {
    run(input, transfer = [], affinity, runOptions) {
      if (closing)
        return Promise.reject(new AppError('UNAVAILABLE', `${options.name} pool is closed`, { transient: true }));
      return send(
        affinity === undefined ? leastBusy() : (slots[hashOf(affinity) % slots.length] as WorkerSlot),
        input,
        transfer,
        runOptions?.timeoutMs,
      );
    },
    async broadcast(input) {
      if (closing) return [];
      const answers = await Promise.allSettled(slots.map((slot) => send(slot, input, [])));
      return answers.flatMap((answer) => (answer.status === 'fulfilled' ? [answer.value] : []));
    },
    pending: () => slots.reduce((sum, slot) => sum + slot.pending, 0),
    ready: () => !closing && slots.every((slot) => slot.alive),
    async close(farewell, timeoutMs = 5000) {
      closing = true;
      if (farewell !== undefined) {
        await within(Promise.allSettled(slots.map((slot) => send(slot, farewell, []))), timeoutMs);
      }
      await Promise.all(slots.map((slot) => slot.worker.terminate()));
    },
  };
}

/** A stable, well-spread hash of a key (FNV-1a), for worker affinity. */
function hashOf(key: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < key.length; index += 1) {
    hash ^= key.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/**
 * The compiled thread entry `script` (named in its room: `new URL('./relay.thread.js',
 * import.meta.url)`), or the task module `relative` to `from`. Tests run from TypeScript sources,
 * but a worker thread runs plain JavaScript: from `src/` the module is taken from `dist/` (`npm
 * test` builds first).
 */
export function workerScript(script: URL): URL;
export function workerScript(from: string, relative: string): URL;
export function workerScript(from: string | URL, relative = '.'): URL {
  const url = typeof from === 'string' ? new URL(relative, from) : from;
  const fromSource = (typeof from === 'string' ? from : import.meta.url).endsWith('.ts');
  if (!fromSource) return url;
  return new URL(url.href.replace(/\/src\/(?!.*\/src\/)/, '/dist/'));
}
