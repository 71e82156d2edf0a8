/**
 * The handoff in two stages, each runnable on any thread: `compose` builds a
 * message's bytes (fetching its attachments; stateless, so any compose thread
 * will do) and `send` gives them to the account's pooled relay (stateful: an
 * account is always sent from the same relay thread). Splitting them lets one
 * thread talk SMTP while another composes the next messages (bench/README.md).
 * Where they run is the composition's choice (src/main.ts): compose threads
 * (compose.thread.ts) or the thread that sends; relay threads
 * (relay.thread.ts) or the main thread.
 */
import type { Account } from '../core/account/index.js';
import { errorText, isAppError, type Logger } from '../core/index.js';
import type { MessagePayload } from '../core/message/index.js';
import { metadataHeader, type ProviderName } from '../core/provider/index.js';
import type { Envelope, Handoff, HandoffJob, RelayConnections, RelayReply } from '../core/delivery/index.js';
import { createAttachmentFetcher } from './attachment-fetcher.js';
import { createMailComposerBuilder } from './message-builder.js';
import { createNodemailerRelay } from './nodemailer-relay.js';

/** A message's bytes, ready for the relay; plain data so that it crosses threads. */
export interface SendJob {
  account: Account;
  envelope: Envelope;
  raw: Uint8Array;
  /** Empty when unknown (relayed SMTP submissions). */
  messageIdHeader: string;
}

export type ComposeJob = Omit<HandoffJob, 'account'>;

export type ComposeOutcome =
  | { built: true; raw: Uint8Array; envelope: Envelope; messageIdHeader: string }
  | { built: false; reason: string; transient: boolean };

export interface Composer {
  compose(job: ComposeJob): Promise<ComposeOutcome>;
  close(): Promise<void>;
}

export interface Sender {
  send(job: SendJob): Promise<RelayReply>;
  connections(): Promise<RelayConnections[]>;
  close(): Promise<void>;
}

/** What the stages need, as plain data (it is passed to worker threads as workerData). */
export interface HandoffSettings {
  sendTimeoutMs: number;
  attachmentTimeoutMs: number;
  attachmentMaxBytes: number;
  allowPrivateAttachmentUrls: boolean;
  /** Right-hand side of Message-IDs we generate. */
  hostname: string;
}

export function createComposer(settings: HandoffSettings): Composer {
  const fetcher = createAttachmentFetcher({
    timeoutMs: settings.attachmentTimeoutMs,
    maxBytes: settings.attachmentMaxBytes,
    allowPrivateAddresses: settings.allowPrivateAttachmentUrls,
  });
  const builder = createMailComposerBuilder({
    fetchAttachment: (spec, tenant) => fetcher.fetch(spec, tenant),
    hostname: settings.hostname,
  });
  const withReturnPath = (envelope: ComposeJob['envelope'], job: ComposeJob) =>
    job.returnPath === null ? envelope : { ...envelope, mailFrom: job.returnPath };
  const compose = async (job: ComposeJob): Promise<ComposeOutcome> => {
    if (job.raw !== null)
      return { built: true, raw: job.raw, envelope: withReturnPath(job.envelope, job), messageIdHeader: '' };
    try {
      if (job.payloadJson === null) throw new Error(`message ${job.clientId} has neither payload nor raw bytes`);
      // The Message-ID fixed at submission is kept beside the payload, not inside it.
      const payload: MessagePayload = {
        ...(JSON.parse(job.payloadJson) as MessagePayload),
        messageId: job.messageIdHeader,
      };
      const built = await builder.build({ clientId: job.clientId, payload, tenant: job.tenant });
      return {
        built: true,
        raw: built.raw,
        envelope: withReturnPath(built.envelope, job),
        messageIdHeader: built.messageIdHeader,
      };
    } catch (error) {
      // An attachment that cannot be fetched yet is transient; a broken payload is not worth retrying.
      const transient = !isAppError(error) || error.transient;
      return { built: false, reason: errorText(error), transient };
    }
  };
  return { compose, close: async () => undefined };
}

export function createSender(settings: HandoffSettings, log: Logger): Sender {
  const timeoutMs = settings.sendTimeoutMs;
  const relay = createNodemailerRelay({
    log,
    connectionTimeoutMs: timeoutMs,
    greetingTimeoutMs: timeoutMs,
    socketTimeoutMs: timeoutMs,
  });
  return {
    send: (job) =>
      relay.send(
        job.account,
        job.envelope,
        Buffer.from(job.raw.buffer, job.raw.byteOffset, job.raw.byteLength),
        job.messageIdHeader || undefined,
      ),
    connections: async () => relay.connections(),
    close: () => relay.close(),
  };
}

/**
 * The provider's metadata header, first in the message: its webhooks then name our
 * X-Genro-Mail-ID. Header order carries no meaning outside trace fields (RFC 5322 §3.6).
 */
function withProviderMetadata(raw: Uint8Array, provider: ProviderName | null, clientId: string): Uint8Array {
  const header = provider === null ? null : metadataHeader(provider, clientId);
  return header === null ? raw : Buffer.concat([Buffer.from(`${header}\r\n`, 'latin1'), raw]);
}

/** The two stages chained: compose, then send what was built. */
export function chainHandoff(composer: Composer, sender: Sender): Handoff {
  return {
    async deliver(job) {
      const composed = await composer.compose(job);
      if (!composed.built) return composed;
      const raw = withProviderMetadata(composed.raw, job.account.provider?.provider ?? null, job.clientId);
      const reply = await sender.send({
        account: job.account,
        envelope: composed.envelope,
        raw,
        messageIdHeader: composed.messageIdHeader,
      });
      return { built: true, reply };
    },
    connections: () => sender.connections(),
    close: async () => {
      await sender.close();
      await composer.close();
    },
  };
}

/**
 * Bytes that may move to another thread: an exact copy in a buffer of its own
 * (a small Buffer is a view into Node's shared pool, which must not be transferred).
 */
export function detachable(bytes: Uint8Array): Uint8Array {
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return copy;
}
