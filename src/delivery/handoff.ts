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
import {
  openEnvelope,
  type BodyBytes,
  type BodySeal,
  type MessagePayload,
  type OffloadedFiles,
} from '../core/message/index.js';
import { metadataHeader } from '../core/provider/index.js';
import type {
  Envelope,
  Handoff,
  HandoffJob,
  JobEnvelope,
  RelayConnections,
  RelayReply,
} from '../core/delivery/index.js';
import { createAttachmentFetcher } from './attachment-fetcher.js';
import { createMailComposerBuilder } from './message-builder.js';
import { createNodemailerRelay } from './nodemailer-relay.js';
import { signDkim } from './dkim-signing.js';
import { createFileOffloader, type FileOffloader } from './file-offloader.js';
import { createFileLinks } from '../security/index.js';
import { openBodyObjects, type BodyStoreSettings } from '../storage/index.js';
import type { JetStreamObjectSettings } from '../nats/index.js';
import type { DkimSigner } from '../core/tenant/index.js';

/**
 * A message's bytes, ready for the relay; plain data so that it crosses threads. An SMTP
 * submission's stay sealed until the thread that sends them opens them.
 */
export interface SendJob {
  account: Account;
  /** Sealed as stored (an SMTP submission's), opened here by the thread that sends. */
  envelope: JobEnvelope;
  body: BodyBytes;
  /** A header line put in front of the body (the provider's metadata), or null. */
  prepend: string | null;
  /** Header lines put in front unless the body has a List-Unsubscribe of its own (HandoffJob's); null: none. */
  listUnsubscribe: string[] | null;
  /** Empty when unknown (relayed SMTP submissions). */
  messageIdHeader: string;
  /** The tenant's DKIM keys: those of the message's From domain sign it, last, before it goes. */
  dkim: DkimSigner[];
}

/** What composing a message reads of its job. */
export type ComposeJob = Pick<
  HandoffJob,
  'clientId' | 'source' | 'body' | 'messageIdHeader' | 'envelope' | 'returnPath' | 'tenant'
>;

export type ComposeOutcome =
  | { built: true; body: BodyBytes; envelope: JobEnvelope; messageIdHeader: string; files?: OffloadedFiles }
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
  /** Where offloaded attachments go (attachment-offload.ts); null: no body store, every attachment goes whole. */
  files: FileStoreSettings | null;
}

export interface FileStoreSettings {
  /** The body store's settings, with those of the fleet cluster's object store (used when it is the backend). */
  store: BodyStoreSettings & { jetstream: JetStreamObjectSettings };
  /** The download links' key (security/file-links.ts). */
  linksKey: Uint8Array;
  /** `files.retention_seconds`: the longest a link lives. */
  maxLifetimeSeconds: number;
}

/** The body store as a thread opens it: the NATS client is loaded only when the fleet cluster's object store is the backend. */
const threadBodyObjects = (store: FileStoreSettings['store']) =>
  openBodyObjects(store, Date.now, async () =>
    (await import('../nats/index.js')).createJetStreamObjects(store.jetstream, store.ownNames),
  );

/**
 * The offloader of a composer: its body store opened on the first message that offloads (again, if
 * that failed), the thread's own connection to it (the fleet cluster's object store too).
 */
function fileOffloaderOf(settings: FileStoreSettings | null, seal: BodySeal): FileOffloader | null {
  if (settings === null) return null;
  const links = createFileLinks(settings.linksKey);
  let opened: Promise<Pick<FileOffloader, 'offload'>> | null = null;
  const offloader = (): Promise<Pick<FileOffloader, 'offload'>> =>
    (opened ??= threadBodyObjects(settings.store).then(
      (objects) => createFileOffloader({ links, seal, objects, ownNames: settings.store.ownNames }),
      (error: unknown) => {
        opened = null;
        throw error;
      },
    ));
  return {
    maxLifetimeSeconds: settings.maxLifetimeSeconds,
    offload: async (request, file) => (await offloader()).offload(request, file),
  };
}

/** An envelope in clear, opened here when it was sealed (its `mailFrom` beside it replaces the sealed one: VERP). */
function openedEnvelope(envelope: JobEnvelope, seal: BodySeal): Envelope {
  if (!('sealed' in envelope)) return envelope;
  const { sealed } = envelope;
  const fields = openEnvelope(seal, sealed.key, sealed.tenantId, sealed.sealed);
  return { mailFrom: envelope.mailFrom ?? fields.mailFrom, rcptTo: fields.rcptTo };
}

/** A body in clear, opened here when it was sealed. */
function opened(body: BodyBytes, seal: BodySeal): Buffer {
  if ('clear' in body) return Buffer.from(body.clear.buffer, body.clear.byteOffset, body.clear.byteLength);
  return seal.open(body.sealed);
}

export function createComposer(settings: HandoffSettings, seal: BodySeal): Composer {
  const fetcher = createAttachmentFetcher({
    timeoutMs: settings.attachmentTimeoutMs,
    maxBytes: settings.attachmentMaxBytes,
    allowPrivateAddresses: settings.allowPrivateAttachmentUrls,
  });
  const builder = createMailComposerBuilder({
    fetchAttachment: (spec, tenant) => fetcher.fetch(spec, tenant),
    hostname: settings.hostname,
    files: fileOffloaderOf(settings.files, seal),
    now: Date.now,
  });
  const withReturnPath = (envelope: ComposeJob['envelope'], job: ComposeJob) =>
    job.returnPath === null ? envelope : { ...envelope, mailFrom: job.returnPath };
  const compose = async (job: ComposeJob): Promise<ComposeOutcome> => {
    if ('sealed' in job.body && job.body.sealed.key.length === 0)
      return {
        built: false,
        reason: 'the body of this message was erased: it can no longer be sent',
        transient: false,
      };
    // Relayed as it is: opened by the thread that sends it.
    if (job.source === 'smtp')
      return { built: true, body: job.body, envelope: withReturnPath(job.envelope, job), messageIdHeader: '' };
    try {
      // The Message-ID fixed at submission is kept beside the payload, not inside it.
      const payload: MessagePayload = {
        ...(JSON.parse(opened(job.body, seal).toString('utf8')) as MessagePayload),
        messageId: job.messageIdHeader,
      };
      const built = await builder.build({ clientId: job.clientId, payload, tenant: job.tenant });
      return {
        built: true,
        body: { clear: built.raw },
        envelope: withReturnPath(built.envelope, job),
        messageIdHeader: built.messageIdHeader,
        ...(built.files === undefined ? {} : { files: built.files }),
      };
    } catch (error) {
      // An attachment that cannot be fetched yet is transient; a broken payload is not worth retrying.
      const transient = !isAppError(error) || error.transient;
      return { built: false, reason: errorText(error), transient };
    }
  };
  return { compose, close: async () => undefined };
}

export function createSender(settings: HandoffSettings, seal: BodySeal, log: Logger): Sender {
  const timeoutMs = settings.sendTimeoutMs;
  const relay = createNodemailerRelay({
    log,
    connectionTimeoutMs: timeoutMs,
    greetingTimeoutMs: timeoutMs,
    socketTimeoutMs: timeoutMs,
  });
  return {
    send: async (job) => {
      // A body that does not open (a secret key changed) throws: the message waits and is retried.
      const body = opened(job.body, seal);
      const lines = headerLines(job, body);
      const raw = lines.length === 0 ? body : Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n`, 'latin1'), body]);
      // Signed last: every header the proxy adds is in what the signature covers.
      const signed = await signDkim(raw, job.dkim);
      return relay.send(job.account, openedEnvelope(job.envelope, seal), signed, job.messageIdHeader || undefined);
    },
    connections: async () => relay.connections(),
    close: () => relay.close(),
  };
}

/** The end of a message's header section: its first empty line (or the whole message, when it has no body). */
function headerSectionOf(body: Buffer): string {
  const end = body.indexOf('\r\n\r\n');
  return body.subarray(0, end === -1 ? body.length : end).toString('latin1');
}

const LIST_UNSUBSCRIBE = /(?:^|\n)list-unsubscribe[ \t]*:/i;

/**
 * What goes in front of the body: the provider's metadata, and the unsubscribe link unless the
 * client wrote a List-Unsubscribe of its own (theirs is kept, never doubled: a receiver may
 * distrust a message with two).
 */
function headerLines(job: SendJob, body: Buffer): string[] {
  const lines = job.prepend === null ? [] : [job.prepend];
  if (job.listUnsubscribe !== null && !LIST_UNSUBSCRIBE.test(headerSectionOf(body))) lines.push(...job.listUnsubscribe);
  return lines;
}

/** The two stages chained: compose, then send what was built. */
export function chainHandoff(composer: Composer, sender: Sender): Handoff {
  return {
    async deliver(job) {
      const composed = await composer.compose(job);
      if (!composed.built) return composed;
      const provider = job.account.provider?.provider ?? null;
      const reply = await sender.send({
        account: job.account,
        envelope: composed.envelope,
        body: composed.body,
        // The provider's metadata header, first in the message: its webhooks then name our
        // X-Genro-Mail-ID. Header order carries no meaning outside trace fields (RFC 5322 §3.6).
        prepend: provider === null ? null : metadataHeader(provider, job.clientId),
        messageIdHeader: composed.messageIdHeader,
        dkim: job.dkim,
        listUnsubscribe: job.listUnsubscribe,
      });
      return { built: true, reply, ...(composed.files === undefined ? {} : { files: composed.files }) };
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
