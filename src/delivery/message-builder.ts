/**
 * MessageBuilder over nodemailer's MailComposer: turns a stored MessagePayload into
 * RFC 5322 bytes and its SMTP envelope. Bcc lives only in the envelope (RFC 5322 §3.6.3).
 */
import { createHash, randomUUID } from 'node:crypto';
import type Mail from 'nodemailer/lib/mailer/index.js';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { builtBytes } from './whole-message-stream.js';
import { parseMailbox, type Mailbox, AppError } from '../core/index.js';
import { MAIL_ID_HEADER, headerValue, type AttachmentSpec, type MessagePayload } from '../core/message/index.js';
import type { BuildRequest, BuiltMessage, Envelope, MessageBuilder } from '../core/delivery/index.js';
import type { AttachmentFetcher } from './attachment-fetcher.js';
import { offloaded } from './offloaded-attachments.js';
import type { FileOffloader } from './file-offloader.js';

export interface MailComposerBuilderDeps {
  fetchAttachment: AttachmentFetcher['fetch'];
  /** Where large attachments go instead (attachment-offload.ts); null: the daemon has no body store, all go whole. */
  files: FileOffloader | null;
  now: () => number;
  /** Right-hand side of generated Message-IDs. */
  hostname: string;
}

/**
 * Headers the builder owns: a client copy would contradict the envelope, the
 * MIME structure or our id, so it is dropped. Message-ID and Date are kept.
 */
const OWNED_HEADERS = new Set([
  'from',
  'to',
  'cc',
  'bcc',
  'reply-to',
  'subject',
  'message-id',
  'mime-version',
  'content-type',
  'content-transfer-encoding',
  MAIL_ID_HEADER.toLowerCase(),
]);

function mailboxOf(text: string): Mailbox {
  const mailbox = parseMailbox(text);
  // Payloads are validated at intake; an unparsable one is a bug, not an outcome.
  if (mailbox === null)
    throw new AppError('INTERNAL', 'stored payload holds an invalid address', { details: { address: text } });
  return mailbox;
}

const bareAddress = (text: string): string => mailboxOf(text).address;

/**
 * The mailbox as nodemailer's {name, address}, never as text: given text,
 * nodemailer parses it again with its own rules, and a display name that our
 * parser took whole (`victim@evil.example, Evil <me@example.com>`, `a"b <me@...>`)
 * came out as extra or different addresses in the header, not in the envelope.
 */
function headerMailbox(text: string): { name: string; address: string } {
  const { name, address } = mailboxOf(text);
  return { name: name ?? '', address };
}

/** MAIL FROM is the return path, else From; RCPT TO is To+Cc+Bcc, once each, in order. */
export function envelopeOf(payload: MessagePayload): Envelope {
  const seen = new Set<string>();
  const rcptTo: string[] = [];
  for (const recipient of [...payload.to, ...payload.cc, ...payload.bcc].map(bareAddress)) {
    const key = recipient.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    rcptTo.push(recipient);
  }
  return { mailFrom: bareAddress(payload.returnPath ?? payload.from), rcptTo };
}

function angled(id: string): string {
  const trimmed = id.trim();
  return `${trimmed.startsWith('<') ? '' : '<'}${trimmed}${trimmed.endsWith('>') ? '' : '>'}`;
}

function customHeaders(
  payload: MessagePayload,
  clientId: string,
): Record<string, string | { prepared: true; value: string }> {
  const headers: Record<string, string | { prepared: true; value: string }> = {};
  for (const [name, value] of Object.entries(payload.headers)) {
    if (!OWNED_HEADERS.has(name.toLowerCase())) headers[name] = value;
  }
  // Written as is: nodemailer would otherwise turn an id holding `"`, `:` or `;`
  // (printable ASCII, so a valid id) into RFC 2047 encoded words, and the receiver,
  // and our own bounce correlation, would read `=?UTF-8?Q?...?=` instead of the id.
  // Intake keeps ids to 1-255 printable ASCII characters without spaces: nothing to fold or escape.
  headers[MAIL_ID_HEADER] = { prepared: true, value: clientId };
  return headers;
}

function bodies(payload: MessagePayload): Pick<Mail.Options, 'text' | 'html'> {
  if (payload.html !== null)
    return payload.body === null ? { html: payload.html } : { text: payload.body, html: payload.html };
  if (payload.body === null) return { text: '' };
  return payload.contentType === 'html' ? { html: payload.body } : { text: payload.body };
}

async function fetchAttachments(
  specs: AttachmentSpec[],
  request: BuildRequest,
  fetchAttachment: AttachmentFetcher['fetch'],
): Promise<Array<Mail.Attachment & { content: Buffer; filename: string }>> {
  const attachments: Array<Mail.Attachment & { content: Buffer; filename: string }> = [];
  for (const spec of specs) {
    const content = await fetchAttachment(spec, request.tenant);
    if (spec.contentMd5 !== null && createHash('md5').update(content).digest('hex') !== spec.contentMd5.toLowerCase()) {
      throw new AppError('ATTACHMENT_UNAVAILABLE', `attachment ${spec.filename} does not match its content_md5`, {
        transient: true,
        details: { filename: spec.filename },
      });
    }
    attachments.push({
      filename: spec.filename,
      content,
      ...(spec.mimeType === null ? {} : { contentType: spec.mimeType }),
    });
  }
  return attachments;
}

function list(addresses: string[]): Array<{ name: string; address: string }> | undefined {
  return addresses.length === 0 ? undefined : addresses.map(headerMailbox);
}

const NON_ASCII = /[^\x00-\x7f]/;
const isAscii = (text: string | null): boolean => text === null || !NON_ASCII.test(text);

export function createMailComposerBuilder(deps: MailComposerBuilderDeps): MessageBuilder {
  return {
    async build(request: BuildRequest): Promise<BuiltMessage> {
      const { payload } = request;
      const fetched = await fetchAttachments(payload.attachments, request, deps.fetchAttachment);
      const { attachments, files } = await offloaded(fetched, request, deps);
      const messageIdHeader = angled(
        payload.messageId ?? headerValue(payload.headers, 'message-id') ?? `${randomUUID()}@${deps.hostname}`,
      );
      const options: Mail.Options = {
        from: headerMailbox(payload.from),
        to: list(payload.to),
        cc: list(payload.cc),
        bcc: list(payload.bcc),
        replyTo: payload.replyTo === null ? undefined : headerMailbox(payload.replyTo),
        subject: payload.subject,
        ...bodies(payload),
        headers: customHeaders(payload, request.clientId),
        messageId: messageIdHeader,
        // Shared part of the multipart boundaries: from the pooled UUID source,
        // where nodemailer would call randomBytes for every MIME node.
        baseBoundary: randomUUID().replaceAll('-', ''),
        // nodemailer otherwise counts non-ASCII characters over the whole body to
        // choose (a visible share of relay CPU in a profile); one native test decides the same way.
        textEncoding: isAscii(payload.body) && isAscii(payload.html) ? 'quoted-printable' : 'base64',
        attachments,
        // Every part is in memory: nodemailer must never read a path or URL itself.
        disableFileAccess: true,
        disableUrlAccess: true,
      };
      const composer = new MailComposer(options);
      // As build() would: Date added when the client gave none; Bcc left out of the bytes.
      const raw = await builtBytes(composer.compile());
      return { raw, envelope: envelopeOf(payload), messageIdHeader, ...(files === null ? {} : { files }) };
    },
  };
}
