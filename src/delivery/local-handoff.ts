/**
 * The handoff on the calling thread: build the message's bytes (fetching its
 * attachments) and send them through the account's pooled relay. It runs on
 * the main thread when `dispatch.relay_threads = 0`, and inside each relay
 * worker thread otherwise (src/workers/relay.ts).
 */
import { isAppError } from '../core/app-error.js';
import type { Logger } from '../core/logger.js';
import type { MessagePayload } from '../core/message.js';
import type { BuiltMessage, Handoff, HandoffJob, MessageBuilder, Relay } from '../core/relay.js';
import { createAttachmentFetcher } from './attachment-fetcher.js';
import { createMailComposerBuilder } from './message-builder.js';
import { createNodemailerRelay } from './nodemailer-relay.js';

async function build(job: HandoffJob, builder: MessageBuilder): Promise<BuiltMessage> {
  if (job.raw !== null) return { raw: job.raw, envelope: job.envelope, messageIdHeader: '' };
  if (job.payloadJson === null) throw new Error(`message ${job.clientId} has neither payload nor raw bytes`);
  // The Message-ID fixed at submission is kept beside the payload, not inside it.
  const payload: MessagePayload = { ...(JSON.parse(job.payloadJson) as MessagePayload), messageId: job.messageIdHeader };
  return builder.build({ clientId: job.clientId, payload, tenant: job.tenant });
}

export function createLocalHandoff(deps: { relay: Relay; builder: MessageBuilder }): Handoff {
  return {
    async deliver(job) {
      let built: BuiltMessage;
      try {
        built = await build(job, deps.builder);
      } catch (error) {
        // An attachment that cannot be fetched yet is transient; a broken payload is not worth retrying.
        const transient = !isAppError(error) || error.transient;
        return { built: false, reason: error instanceof Error ? error.message : String(error), transient };
      }
      const reply = await deps.relay.send(job.account, built.envelope, built.raw, built.messageIdHeader || undefined);
      return { built: true, reply };
    },
    close: () => deps.relay.close(),
  };
}

/** What a relay thread needs to build and send on its own: plain data, passed as workerData. */
export interface RelaySettings {
  sendTimeoutMs: number;
  attachmentTimeoutMs: number;
  attachmentMaxBytes: number;
  allowPrivateAttachmentUrls: boolean;
  /** Right-hand side of Message-IDs we generate. */
  hostname: string;
}

/** The nodemailer relay, the attachment fetcher and the MIME builder, put together. */
export function createRelayHandoff(settings: RelaySettings, log: Logger): Handoff {
  const timeoutMs = settings.sendTimeoutMs;
  const relay = createNodemailerRelay({ log, connectionTimeoutMs: timeoutMs, greetingTimeoutMs: timeoutMs, socketTimeoutMs: timeoutMs });
  const fetcher = createAttachmentFetcher({
    timeoutMs: settings.attachmentTimeoutMs,
    maxBytes: settings.attachmentMaxBytes,
    allowPrivateAddresses: settings.allowPrivateAttachmentUrls,
  });
  const builder = createMailComposerBuilder({ fetchAttachment: (spec, tenant) => fetcher.fetch(spec, tenant), hostname: settings.hostname });
  return createLocalHandoff({ relay, builder });
}
