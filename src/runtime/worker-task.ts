/**
 * The worker side of worker-pool.ts: a task module calls `serveTasks` with its
 * pure handler; every request is answered with its output or its error text.
 */
import { parentPort } from 'node:worker_threads';

export interface TaskRequest<In> {
  id: number;
  input: In;
}

export type TaskReply<Out> = { id: number; ok: true; output: Out } | { id: number; ok: false; error: string };

export function serveTasks<In, Out>(handle: (input: In) => Out): void {
  const port = parentPort;
  if (port === null) throw new Error('serveTasks runs inside a worker thread');
  port.on('message', (request: TaskRequest<In>) => {
    let reply: TaskReply<Out>;
    try {
      reply = { id: request.id, ok: true, output: handle(request.input) };
    } catch (error) {
      reply = { id: request.id, ok: false, error: error instanceof Error ? error.message : String(error) };
    }
    port.postMessage(reply);
  });
}
