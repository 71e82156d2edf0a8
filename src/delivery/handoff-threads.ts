/**
 * Where messages are built and relayed: on the main thread, or in compose and
 * relay worker threads (README "Threads"). Each account is always served by the
 * same relay thread, so its connection pool and its limit live in one place.
 */
import type { Logger } from '../core/index.js';
import type { Handoff, HandoffJob, HandoffResult, RelayConnections, RelayReply } from '../core/delivery/index.js';
import { createWorkerPool, workerScript } from '../runtime/index.js';
import { createBodySeal, type KeyEncryptionKey } from '../security/index.js';
import {
  chainHandoff,
  createComposer,
  createSender,
  type Composer,
  type ComposeJob,
  type ComposeOutcome,
  type HandoffSettings,
  type Sender,
  type SendJob,
} from './handoff.js';

/** What a relay thread is asked (relay.thread.ts). */
export type RelayTask =
  { kind: 'send'; job: SendJob } | { kind: 'deliver'; job: HandoffJob } | { kind: 'connections' } | { kind: 'close' };

export interface HandoffThreads {
  composeThreads: number;
  relayThreads: number;
  /** The relay threads' log level. */
  logLevel: string;
}

/** What a compose or relay thread is started with (workerData). */
export interface HandoffThreadData {
  settings: HandoffSettings;
  /** The key-encryption keys that open bodies, the current one first. */
  bodyKeys: KeyEncryptionKey[];
  logLevel: string;
}

export function createThreadedHandoff(
  settings: HandoffSettings,
  bodyKeys: KeyEncryptionKey[],
  threads: HandoffThreads,
  log: Logger,
): Handoff {
  const data: HandoffThreadData = { settings, bodyKeys, logLevel: threads.logLevel };
  if (threads.relayThreads === 0) {
    const seal = createBodySeal(bodyKeys);
    const composer =
      threads.composeThreads === 0
        ? createComposer(settings, seal)
        : threadedComposer(threads.composeThreads, data, log);
    return chainHandoff(composer, createSender(settings, seal, log.child({ component: 'relay' })));
  }
  const relays = createWorkerPool<RelayTask, RelayReply | HandoffResult | RelayConnections[] | null>({
    script: workerScript(new URL('./relay.thread.js', import.meta.url)),
    size: threads.relayThreads,
    name: 'relay',
    log,
    data,
  });
  const affinity = (account: { tenantId: string; id: string }): string => `${account.tenantId}/${account.id}`;
  // Each account's pool lives in one relay thread: ask them all.
  const connections = async (): Promise<RelayConnections[]> =>
    ((await relays.broadcast({ kind: 'connections' })) as RelayConnections[][]).flat();
  if (threads.composeThreads === 0) {
    // No compose threads: each relay thread composes what it sends.
    return {
      deliver: async (job) => (await relays.run({ kind: 'deliver', job }, [], affinity(job.account))) as HandoffResult,
      connections,
      close: () => relays.close({ kind: 'close' }),
    };
  }
  const sender: Sender = {
    send: async (job) => (await relays.run({ kind: 'send', job }, [], affinity(job.account))) as RelayReply,
    connections,
    close: () => relays.close({ kind: 'close' }),
  };
  return chainHandoff(threadedComposer(threads.composeThreads, data, log), sender);
}

/**
 * Compose threads build messages from their payloads. A message that arrived whole (an SMTP
 * submission) has nothing to build: it is composed here, sparing it two hops between threads
 * (each hop wakes the other thread, which costs more under load than composing it here).
 */
function threadedComposer(threads: number, data: HandoffThreadData, log: Logger): Composer {
  const composers = createWorkerPool<ComposeJob, ComposeOutcome>({
    script: workerScript(new URL('./compose.thread.js', import.meta.url)),
    size: threads,
    name: 'compose',
    log,
    data,
  });
  // Composing an SMTP submission opens nothing: its body goes on sealed to the relay thread.
  const local = createComposer(data.settings, createBodySeal(data.bodyKeys));
  return {
    compose: (job) => (job.source === 'http' ? composers.run(job) : local.compose(job)),
    close: () => composers.close(),
  };
}
