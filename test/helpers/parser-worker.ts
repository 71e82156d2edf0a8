/**
 * analyseBounce in a worker thread, raced against a time budget. In-process
 * racing is not enough: a parse stuck in a synchronous regex blocks the event
 * loop, so the timer could never fire and the test run would hang with it. A
 * worker can be terminated; the next message gets a fresh one.
 */
import { Worker } from 'node:worker_threads';
import { BUILT_PARSER } from './built-parser.js';

export type ParseOutcome =
  | { status: 'resolved'; kind: string; recipients: number; ms: number }
  | { status: 'threw'; error: string; ms: number }
  | { status: 'timeout'; ms: number };

// Plain JS (a worker cannot load TypeScript): CommonJS, which may still import() the ESM parser.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
import(workerData.parser).then(({ analyseBounce }) => {
  parentPort.on('message', (bytes) => {
    const raw = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    analyseBounce(raw).then(
      (analysis) => parentPort.postMessage({ kind: analysis.kind, recipients: analysis.recipients.length }),
      (error) => parentPort.postMessage({ error: String((error && error.stack) || error) }),
    );
  });
  parentPort.postMessage({ ready: true });
});
`;

type Reply = { ready: true } | { kind: string; recipients: number } | { error: string };

export interface ParserWorker {
  analyse(raw: Buffer, budgetMs: number): Promise<ParseOutcome>;
  close(): Promise<void>;
}

export function createParserWorker(): ParserWorker {
  let worker: Worker | null = null;
  let ready: Promise<void> = Promise.resolve();

  const start = (): Worker => {
    const started = new Worker(WORKER_SOURCE, { eval: true, workerData: { parser: BUILT_PARSER } });
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
    async analyse(raw, budgetMs) {
      worker ??= start();
      const current = worker;
      await ready; // the worker's start-up (loading mailparser) is not the message's time
      const startedAt = performance.now();
      const ms = (): number => Math.round(performance.now() - startedAt);
      let timer: NodeJS.Timeout | undefined;
      const reply = new Promise<ParseOutcome>((resolve) => {
        const onMessage = (message: Reply): void => {
          current.off('error', onError);
          if ('error' in message) resolve({ status: 'threw', error: message.error, ms: ms() });
          else if ('kind' in message) resolve({ status: 'resolved', kind: message.kind, recipients: message.recipients, ms: ms() });
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
      const budget = new Promise<ParseOutcome>((resolve) => {
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
