/**
 * Worker-thread entry (a composition root, like main.ts): builds and relays
 * the messages the dispatcher hands it. Each account is always served by the
 * same relay thread (pool affinity), so its connection pool and its limit on
 * connections live in one place.
 */
import { threadId, workerData } from 'node:worker_threads';
import type { HandoffJob, HandoffResult } from '../core/relay.js';
import { createRelayHandoff, type RelaySettings } from '../delivery/local-handoff.js';
import { serveTasks, threadLogger } from '../runtime/worker-task.js';

export type RelayTask = { kind: 'deliver'; job: HandoffJob } | { kind: 'close' };

const { settings, logLevel } = workerData as { settings: RelaySettings; logLevel: string };
const handoff = createRelayHandoff(settings, threadLogger(logLevel, { component: 'relay', thread: threadId }));

serveTasks<RelayTask, HandoffResult | null>(async (task) => {
  if (task.kind === 'deliver') return handoff.deliver(task.job);
  await handoff.close();
  return null;
});
