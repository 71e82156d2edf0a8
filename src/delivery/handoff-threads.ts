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
import { affinityOf, CONTEXT_MISSING, contextShipper, isContextMissing, type Packed } from './relay-context.js';

/** What a compose thread needs of a job, and nothing it does not (the account, the keys): each field is cloned to it. */
const composeJobOf = (job: ComposeJob): ComposeJob => ({
  clientId: job.clientId,
  source: job.source,
  body: job.body,
  messageIdHeader: job.messageIdHeader,
  envelope: job.envelope,
  returnPath: job.returnPath,
  tenant: job.tenant,
});

/** What a relay thread is asked (relay.thread.ts): a job's account and DKIM keys named when it holds them (relay-context.ts). */
export type RelayTask =
  | { kind: 'send'; job: Packed<SendJob> }
  | { kind: 'deliver'; job: Packed<HandoffJob> }
  | { kind: 'connections' }
  | { kind: 'close' };

/** What a relay thread answers. */
export type RelayAnswer = RelayReply | HandoffResult | RelayConnections[] | typeof CONTEXT_MISSING | null;

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
  const relays = createWorkerPool<RelayTask, RelayAnswer>({
    script: workerScript(new URL('./relay.thread.js', import.meta.url)),
    size: threads.relayThreads,
    name: 'relay',
    log,
    data,
  });
  const shipper = contextShipper();
  /** A job to its account's thread: its context named when the thread holds it, sent whole when it answers that it does not. */
  const run = async (job: SendJob | HandoffJob, kind: 'send' | 'deliver'): Promise<RelayAnswer> => {
    const affinity = affinityOf(job.account);
    const task = (whole: boolean) =>
      (kind === 'send'
        ? { kind, job: shipper.pack(job as SendJob, whole) }
        : { kind, job: shipper.pack(job as HandoffJob, whole) }) as RelayTask;
    const answer = await relays.run(task(false), [], affinity);
    return isContextMissing(answer) ? relays.run(task(true), [], affinity) : answer;
  };
  // Each account's pool lives in one relay thread: ask them all.
  const connections = async (): Promise<RelayConnections[]> =>
    ((await relays.broadcast({ kind: 'connections' })) as RelayConnections[][]).flat();
  if (threads.composeThreads === 0) {
    // No compose threads: each relay thread composes what it sends.
    return {
      deliver: async (job) => (await run(job, 'deliver')) as HandoffResult,
      connections,
      close: () => relays.close({ kind: 'close' }),
    };
  }
  const sender: Sender = {
    send: async (job) => (await run(job, 'send')) as RelayReply,
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
    compose: (job) => (job.source === 'http' ? composers.run(composeJobOf(job)) : local.compose(job)),
    close: () => composers.close(),
  };
}
