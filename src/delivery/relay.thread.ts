/**
 * Worker-thread entry (started from handoff-threads.ts): sends messages
 * through the accounts' pooled relays, composing them first when no compose
 * threads do (`deliver`). Each account is always served by the same relay
 * thread (pool affinity), so its connection pool and its limit on connections
 * live in one place. Sealed bodies are opened here, not on the main thread.
 */
import { threadId, workerData } from 'node:worker_threads';
import { chainHandoff, createComposer, createSender } from './handoff.js';
import type { HandoffThreadData, RelayAnswer, RelayTask } from './handoff-threads.js';
import { CONTEXT_MISSING, contextHolder } from './relay-context.js';
import { serveTasks, threadLogger } from '../runtime/index.js';
import { createBodySeal } from '../security/index.js';

const { settings, bodyKeys, logLevel } = workerData as HandoffThreadData;
const seal = createBodySeal(bodyKeys);
const sender = createSender(settings, seal, threadLogger(logLevel, { component: 'relay', thread: threadId }));
const handoff = chainHandoff(createComposer(settings, seal), sender);

const contexts = contextHolder();

serveTasks<RelayTask, RelayAnswer>(async (task) => {
  if (task.kind === 'send') {
    const job = contexts.unpack(task.job);
    return job === null ? CONTEXT_MISSING : sender.send(job);
  }
  if (task.kind === 'connections') return sender.connections();
  if (task.kind === 'deliver') {
    const job = contexts.unpack(task.job);
    return job === null ? CONTEXT_MISSING : handoff.deliver(job);
  }
  await handoff.close();
  return null;
});
