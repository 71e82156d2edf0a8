/**
 * Where messages are built and relayed: on the main thread, or in compose and
 * relay worker threads (README "Threads").
 */
import { hostname } from 'node:os';
import type { Config } from '../config/index.js';
import type { Logger } from '../core/logger.js';
import type { Handoff, HandoffResult, RelayConnections, RelayReply } from '../core/relay.js';
import { chainHandoff, createComposer, createSender, type Composer, type ComposeJob, type ComposeOutcome, type HandoffSettings, type Sender } from '../delivery/handoff.js';
import { createWorkerPool, workerScript } from '../runtime/worker-pool.js';
import type { RelayTask } from '../workers/relay.js';

export function createHandoff(config: Readonly<Config>, log: Logger): Handoff {
  const { dispatch } = config;
  const settings: HandoffSettings = {
    sendTimeoutMs: dispatch.send_timeout_seconds * 1000,
    attachmentTimeoutMs: dispatch.attachment_timeout_seconds * 1000,
    attachmentMaxBytes: dispatch.attachment_max_bytes,
    allowPrivateAttachmentUrls: dispatch.allow_private_attachment_urls,
    hostname: hostname(),
  };
  if (dispatch.relay_threads === 0) {
    const composer = dispatch.compose_threads === 0 ? createComposer(settings) : threadedComposer(dispatch.compose_threads, settings, log);
    return chainHandoff(composer, createSender(settings, log.child({ component: 'relay' })));
  }
  const relays = createWorkerPool<RelayTask, RelayReply | HandoffResult | RelayConnections[] | null>({
    script: workerScript(import.meta.url, '../workers/relay.js'),
    size: dispatch.relay_threads,
    name: 'relay',
    log,
    data: { settings, logLevel: config.log.level },
  });
  const affinity = (account: { tenantId: string; id: string }): string => `${account.tenantId}/${account.id}`;
  // Each account's pool lives in one relay thread: ask them all.
  const connections = async (): Promise<RelayConnections[]> => ((await relays.broadcast({ kind: 'connections' })) as RelayConnections[][]).flat();
  if (dispatch.compose_threads === 0) {
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
  return chainHandoff(threadedComposer(dispatch.compose_threads, settings, log), sender);
}

function threadedComposer(threads: number, settings: HandoffSettings, log: Logger): Composer {
  const composers = createWorkerPool<ComposeJob, ComposeOutcome>({
    script: workerScript(import.meta.url, '../workers/compose.js'),
    size: threads,
    name: 'compose',
    log,
    data: { settings },
  });
  return { compose: (job) => composers.run(job), close: () => composers.close() };
}

