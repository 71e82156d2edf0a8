/**
 * Worker-thread entry (a composition root, like main.ts): sends composed
 * messages through the accounts' pooled relays. Each account is always served
 * by the same relay thread (pool affinity), so its connection pool and its
 * limit on connections live in one place.
 */
import { threadId, workerData } from 'node:worker_threads';
import type { RelayReply } from '../core/relay.js';
import { createSender, type HandoffSettings, type SendJob } from '../delivery/handoff.js';
import { serveTasks, threadLogger } from '../runtime/worker-task.js';

export type RelayTask = { kind: 'send'; job: SendJob } | { kind: 'close' };

const { settings, logLevel } = workerData as { settings: HandoffSettings; logLevel: string };
const sender = createSender(settings, threadLogger(logLevel, { component: 'relay', thread: threadId }));

serveTasks<RelayTask, RelayReply | null>(async (task) => {
  if (task.kind === 'send') return sender.send(task.job);
  await sender.close();
  return null;
});
