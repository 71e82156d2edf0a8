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
import { Worker, type Transferable } from 'node:worker_threads';
import { AppError, errorText } from '../core/app-error.js';
import type { Logger } from '../core/logger.js';
import type { LogRecord, TaskReply, TaskRequest } from './worker-task.js';
import { within } from './within.js';

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

interface Slot {
  worker: Worker;
  /** False from the worker's exit until its replacement starts. */
  alive: boolean;
  startedAt: number;
  /** Requests waiting for this turn's message to the worker, each with what it transfers. */
  outbox: Array<{ request: TaskRequest<unknown>; transfer: readonly Transferable[] }>;
  tasks: Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>;
}

/** A worker that dies this soon after starting is replaced only after a pause, not in a tight loop. */
const YOUNG_MS = 5000;

export function createWorkerPool<In, Out>(options: WorkerPoolOptions): WorkerPool<In, Out> {
  if (options.size < 1) throw new Error('a worker pool needs at least one worker');
  let nextTaskId = 1;
  let closing = false;
  const slots: Slot[] = [];

  const spawn = (index: number): void => {
    const worker = new Worker(options.script, { workerData: options.data, name: `${options.name}-${index}` });
    const slot: Slot = { worker, alive: true, startedAt: Date.now(), outbox: [], tasks: new Map() };
    slots[index] = slot;
    worker.on('message', (message: Array<TaskReply<unknown>> | LogRecord) => {
      if (!Array.isArray(message)) {
        options.log[message.log.level](message.log.fields, message.log.message);
        return;
      }
      for (const reply of message) {
        const task = slot.tasks.get(reply.id);
        if (task === undefined) continue;
        slot.tasks.delete(reply.id);
        if (reply.ok) task.resolve(reply.output);
        else task.reject(new AppError('INTERNAL', reply.error));
      }
    });
    const fail = (error: Error): void => {
      for (const task of slot.tasks.values()) {
        task.reject(new AppError('UNAVAILABLE', `${options.name} worker stopped: ${error.message}`, { transient: true, cause: error }));
      }
      slot.tasks.clear();
    };
    worker.on('error', (error) => {
      options.log.error({ err: error, worker: index }, `${options.name} worker failed`);
      fail(error);
    });
    worker.on('exit', (code) => {
      slot.alive = false;
      fail(new Error(`exit code ${code}`));
      if (closing || slots[index] !== slot) return;
      options.log.warn({ worker: index, code }, `${options.name} worker exited; starting another`);
      const pauseMs = Date.now() - slot.startedAt >= YOUNG_MS ? 0 : (options.respawnPauseMs ?? 1000);
      if (pauseMs === 0) spawn(index);
      else setTimeout(() => closing || spawn(index), pauseMs).unref();
    });
  };
  for (let index = 0; index < options.size; index += 1) spawn(index);

  const leastBusy = (): Slot => {
    let slot = slots[0] as Slot;
    for (const candidate of slots) if (candidate.tasks.size < slot.tasks.size) slot = candidate;
    return slot;
  };

  const flush = (slot: Slot): void => {
    const batch = slot.outbox;
    slot.outbox = [];
    if (!slot.alive) return; // its tasks were failed when it died
    try {
      slot.worker.postMessage(
        batch.map((entry) => entry.request),
        batch.flatMap((entry) => entry.transfer),
      );
    } catch {
      // One input that cannot be cloned must not sink the others: send them one by one.
      for (const { request, transfer } of batch) {
        try {
          slot.worker.postMessage([request], transfer);
        } catch (error) {
          const task = slot.tasks.get(request.id);
          slot.tasks.delete(request.id);
          task?.reject(new AppError('INTERNAL', `${options.name} task could not be sent: ${errorText(error)}`, { cause: error }));
        }
      }
    }
  };

  const send = (slot: Slot, input: In, transfer: readonly Transferable[], timeoutMs?: number): Promise<Out> => {
    if (!slot.alive) return Promise.reject(new AppError('UNAVAILABLE', `${options.name} worker is restarting`, { transient: true }));
    const id = nextTaskId++;
    return new Promise<Out>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const settle =
        <T>(then: (value: T) => void) =>
        (value: T): void => {
          clearTimeout(timer);
          then(value);
        };
      slot.tasks.set(id, { resolve: settle(resolve as (value: unknown) => void), reject: settle(reject) });
      slot.outbox.push({ request: { id, input }, transfer });
      if (slot.outbox.length === 1) setImmediate(flush, slot);
      if (timeoutMs === undefined) return;
      timer = setTimeout(() => {
        const task = slot.tasks.get(id);
        if (task === undefined) return;
        slot.tasks.delete(id);
        task.reject(new AppError('UNAVAILABLE', `${options.name} task not done within ${timeoutMs} ms`, { details: { timed_out: true } }));
        options.log.warn({ timeoutMs }, `${options.name} task timed out; replacing its worker`);
        // Refuse new tasks at once; the exit handler fails the others and starts a replacement.
        slot.alive = false;
        void slot.worker.terminate();
      }, timeoutMs);
      timer.unref();
    });
  };

  return {
    run(input, transfer = [], affinity, runOptions) {
      if (closing) return Promise.reject(new AppError('UNAVAILABLE', `${options.name} pool is closed`, { transient: true }));
      return send(affinity === undefined ? leastBusy() : (slots[hashOf(affinity) % slots.length] as Slot), input, transfer, runOptions?.timeoutMs);
    },
    async broadcast(input) {
      if (closing) return [];
      const answers = await Promise.allSettled(slots.map((slot) => send(slot, input, [])));
      return answers.flatMap((answer) => (answer.status === 'fulfilled' ? [answer.value] : []));
    },
    pending: () => slots.reduce((sum, slot) => sum + slot.tasks.size, 0),
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
