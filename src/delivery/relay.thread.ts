/**
 * Worker-thread entry (started from handoff-threads.ts): sends messages
 * through the accounts' pooled relays, composing them first when no compose
 * threads do (`deliver`). Each account is always served by the same relay
 * thread (pool affinity), so its connection pool and its limit on connections
 * live in one place.
 */
import { threadId, workerData } from 'node:worker_threads';
import type { HandoffResult, RelayConnections, RelayReply } from '../core/delivery/index.js';
import { chainHandoff, createComposer, createSender, type HandoffSettings } from './handoff.js';
import type { RelayTask } from './handoff-threads.js';
import { serveTasks, threadLogger } from '../runtime/index.js';

const { settings, logLevel } = workerData as { settings: HandoffSettings; logLevel: string };
const sender = createSender(settings, threadLogger(logLevel, { component: 'relay', thread: threadId }));
const handoff = chainHandoff(createComposer(settings), sender);

serveTasks<RelayTask, RelayReply | HandoffResult | RelayConnections[] | null>(async (task) => {
  if (task.kind === 'send') return sender.send(task.job);
  if (task.kind === 'connections') return sender.connections();
  if (task.kind === 'deliver') return handoff.deliver(task.job);
  await handoff.close();
  return null;
});
