/**
 * A compiled parser (analyseBounce, analysePecReceipt) in a worker thread,
 * raced against a time budget. In-process racing is not enough: a parse stuck
 * in a synchronous regex blocks the event loop, so the timer could never fire
 * and the test run would hang with it. A worker can be terminated; the next
 * message gets a fresh one.
 */
import { Worker } from 'node:worker_threads';
import { BUILT_PARSER } from './built-parser.js';

export type ParseOutcome =
  | { status: 'resolved'; kind: string; recipients: number; ms: number }
  | { status: 'threw'; error: string; ms: number }
  | { status: 'timeout'; ms: number };

/** What a parser in a worker answered: its whole result, a throw, or nothing within the budget. */
export type WorkerOutcome<T> =
  | { status: 'resolved'; value: T; ms: number }
  | { status: 'threw'; error: string; ms: number }
  | { status: 'timeout'; ms: number };

/** A module of dist/ (as a file URL) and the async function of one Buffer it exports. */
export interface ParserTarget {
  module: string;
  exportName: string;
}

// Plain JS (a worker cannot load TypeScript): CommonJS, which may still import() the ESM parser.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
import(workerData.module).then((loaded) => {
  const parse = loaded[workerData.exportName];
  parentPort.on('message', (bytes) => {
    const raw = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    Promise.resolve().then(() => parse(raw)).then(
      (value) => parentPort.postMessage({ value }),
      (error) => parentPort.postMessage({ error: String((error && error.stack) || error) }),
    );
  });
  parentPort.postMessage({ ready: true });
});
`;

type Reply<T> = { ready: true } | { value: T } | { error: string };

export interface ModuleWorker<T> {
  run(raw: Buffer, budgetMs: number): Promise<WorkerOutcome<T>>;
  close(): Promise<void>;
}

export function createModuleWorker<T>(target: ParserTarget): ModuleWorker<T> {
  let worker: Worker | null = null;
  let ready: Promise<void> = Promise.resolve();

  const start = (): Worker => {
    const started = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { module: target.module, exportName: target.exportName },
    });
    // Between messages nobody else listens: an error must retire the worker, not crash the test process.
    started.on('error', () => {
      if (worker === started) worker = null;
    });
    ready = new Promise((resolve, reject) => {
      started.once('message', () => resolve());
      started.once('error', reject);
    });
    return started;
  };

  return {
    async run(raw, budgetMs) {
      worker ??= start();
      const current = worker;
      await ready; // the worker's start-up (loading mailparser) is not the message's time
      const startedAt = performance.now();
      const ms = (): number => Math.round(performance.now() - startedAt);
      let timer: NodeJS.Timeout | undefined;
      const reply = new Promise<WorkerOutcome<T>>((resolve) => {
        const onMessage = (message: Reply<T>): void => {
          current.off('error', onError);
          if ('error' in message) resolve({ status: 'threw', error: message.error, ms: ms() });
          else if ('value' in message) resolve({ status: 'resolved', value: message.value, ms: ms() });
        };
        // A crash of the worker itself (out of memory, a stack overflow outside the promise) counts as a throw.
        const onError = (error: Error): void => {
          current.off('message', onMessage);
          worker = null;
          resolve({ status: 'threw', error: String(error.stack ?? error), ms: ms() });
        };
        current.once('message', onMessage);
        current.once('error', onError);
      });
      const budget = new Promise<WorkerOutcome<T>>((resolve) => {
        timer = setTimeout(() => resolve({ status: 'timeout', ms: ms() }), budgetMs);
      });
      current.postMessage(raw);
      const outcome = await Promise.race([reply, budget]);
      clearTimeout(timer);
      if (outcome.status === 'timeout') {
        worker = null;
        await current.terminate();
      }
      return outcome;
    },
    async close() {
      await worker?.terminate();
      worker = null;
    },
  };
}

export interface ParserWorker {
  analyse(raw: Buffer, budgetMs: number): Promise<ParseOutcome>;
  close(): Promise<void>;
}

/** analyseBounce in a worker, its answer summed up as the bounce's kind and recipient count. */
export function createParserWorker(): ParserWorker {
  const worker = createModuleWorker<{ kind: string; recipients: unknown[] }>({
    module: BUILT_PARSER,
    exportName: 'analyseBounce',
  });
  return {
    async analyse(raw, budgetMs) {
      const outcome = await worker.run(raw, budgetMs);
      if (outcome.status !== 'resolved') return outcome;
      return {
        status: 'resolved',
        kind: outcome.value.kind,
        recipients: outcome.value.recipients.length,
        ms: outcome.ms,
      };
    },
    close: () => worker.close(),
  };
}
