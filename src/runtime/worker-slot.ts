/**
 * One worker thread of a pool and the tasks it has in hand: requests sent in
 * the same turn leave as one message, replies settle their tasks, and a worker
 * that fails or exits fails every task it held. Replacing it is the pool's.
 */
import { Worker, type Transferable } from 'node:worker_threads';
import { AppError, errorText, type Logger } from '../core/index.js';
import { endOfTurn } from './end-of-turn.js';
import type { LogRecord, TaskReply, TaskRequest } from './worker-task.js';

export interface WorkerSlotOptions {
  script: URL;
  name: string;
  log: Logger;
  data?: unknown;
}

type Task = { resolve: (value: unknown) => void; reject: (error: Error) => void };

export class WorkerSlot {
  readonly worker: Worker;
  /** False from the worker's exit (or its timeout) until its replacement starts. */
  alive = true;
  readonly startedAt = Date.now();
  /** Requests leave for the worker in one message a turn, each with what it transfers. */
  private readonly post = endOfTurn<{ request: TaskRequest<unknown>; transfer: readonly Transferable[] }>((batch) =>
    this.flush(batch),
  );
  private readonly tasks = new Map<number, Task>();

  /** `onExit` is told once the worker has exited, its tasks failed. */
  constructor(
    private readonly options: WorkerSlotOptions,
    index: number,
    onExit: (code: number) => void,
  ) {
    this.worker = new Worker(options.script, { workerData: options.data, name: `${options.name}-${index}` });
    this.worker.on('message', (message: Array<TaskReply<unknown>> | LogRecord) => this.receive(message));
    this.worker.on('error', (error) => {
      options.log.error({ err: error, worker: index }, `${options.name} worker failed`);
      this.fail(error);
    });
    this.worker.on('exit', (code) => {
      this.alive = false;
      this.fail(new Error(`exit code ${code}`));
      onExit(code);
    });
  }

  /** Tasks sent and not yet answered. */
  get pending(): number {
    return this.tasks.size;
  }

  /** Sends a task with this turn's others; past `timeoutMs` it is rejected and the worker terminated. */
  send(id: number, input: unknown, transfer: readonly Transferable[], timeoutMs?: number): Promise<unknown> {
    return new Promise<unknown>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const settle =
        <T>(then: (value: T) => void) =>
        (value: T): void => {
          clearTimeout(timer);
          then(value);
        };
      this.tasks.set(id, { resolve: settle(resolve), reject: settle(reject) });
      this.post({ request: { id, input }, transfer });
      if (timeoutMs === undefined) return;
      timer = setTimeout(() => this.expire(id, timeoutMs), timeoutMs);
      timer.unref();
    });
  }

  private receive(message: Array<TaskReply<unknown>> | LogRecord): void {
    if (!Array.isArray(message)) {
      this.options.log[message.log.level](message.log.fields, message.log.message);
      return;
    }
    for (const reply of message) {
      const task = this.tasks.get(reply.id);
      if (task === undefined) continue;
      this.tasks.delete(reply.id);
      if (reply.ok) task.resolve(reply.output);
      else task.reject(new AppError('INTERNAL', reply.error));
    }
  }

  private fail(error: Error): void {
    for (const task of this.tasks.values()) {
      task.reject(
        new AppError('UNAVAILABLE', `${this.options.name} worker stopped: ${error.message}`, {
          transient: true,
          cause: error,
        }),
      );
    }
    this.tasks.clear();
  }

  private flush(batch: ReadonlyArray<{ request: TaskRequest<unknown>; transfer: readonly Transferable[] }>): void {
    if (!this.alive) return; // its tasks were failed when it died
    try {
      this.worker.postMessage(
        batch.map((entry) => entry.request),
        batch.flatMap((entry) => entry.transfer),
      );
    } catch {
      // One input that cannot be cloned must not sink the others: send them one by one.
      for (const { request, transfer } of batch) {
        try {
          this.worker.postMessage([request], transfer);
        } catch (error) {
          const task = this.tasks.get(request.id);
          this.tasks.delete(request.id);
          task?.reject(
            new AppError('INTERNAL', `${this.options.name} task could not be sent: ${errorText(error)}`, {
              cause: error,
            }),
          );
        }
      }
    }
  }

  private expire(id: number, timeoutMs: number): void {
    const task = this.tasks.get(id);
    if (task === undefined) return;
    this.tasks.delete(id);
    task.reject(
      new AppError('UNAVAILABLE', `${this.options.name} task not done within ${timeoutMs} ms`, {
        details: { timed_out: true },
      }),
    );
    this.options.log.warn({ timeoutMs }, `${this.options.name} task timed out; replacing its worker`);
    // Refuse new tasks at once; the exit handler fails the others and starts a replacement.
    this.alive = false;
    void this.worker.terminate();
  }
}
