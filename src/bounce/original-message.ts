/**
 * The returned original inside a bounce: its Message-ID and X-Genro-Mail-ID
 * tie the bounce to our message, and its envelope and header recipients name
 * the failed address when the bounce's own words do not. Read from its MIME
 * part (message/rfc822, text/rfc822-headers), else from the quoted text.
 */
import type { Attachment, ParsedMail } from 'mailparser';
import { MAIL_ID_HEADER } from '../core/message/index.js';
import { addressesIn } from './addresses.js';
import { normaliseRecipient } from './recipient-address.js';

const ORIGINAL_TYPES = new Set(['message/rfc822', 'text/rfc822-headers', 'message/global', 'message/global-headers']);
/** Headers of a returned original are at its top; its body is not needed. */
const MAX_ORIGINAL_CHARS = 128 * 1024;
/** Our id header in the original's text, also when quoted (`> `) by the bouncing MTA. */
const QUOTED_MAIL_ID = new RegExp(`^[> \\t]{0,4}${MAIL_ID_HEADER}:[ \\t]*(\\S{1,200})`, 'im');

export const isOriginalType = (type: string): boolean => ORIGINAL_TYPES.has(type.toLowerCase());

export function headerText(mail: ParsedMail, name: string): string | null {
  const value = mail.headers.get(name);
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && 'text' in value && typeof value.text === 'string') return value.text;
  if (typeof value === 'object' && 'value' in value) return String((value as { value: unknown }).value);
  return String(value);
}

const originalPart = (mail: ParsedMail): Attachment | undefined =>
  mail.attachments.find((attachment) => isOriginalType(attachment.contentType));

/** The text the original's headers are in: its MIME part, else the whole raw message. */
export function originalSource(mail: ParsedMail, raw: string): { text: string; attached: boolean } {
  const part = originalPart(mail);
  if (part === undefined) return { text: raw, attached: false };
  // Only its head is read: a large original is not decoded whole (UTF-8 takes at most 4 bytes a character).
  return {
    text: part.content
      .subarray(0, MAX_ORIGINAL_CHARS * 4)
      .toString('utf8')
      .slice(0, MAX_ORIGINAL_CHARS),
    attached: true,
  };
}

/** The returned original's Message-ID and X-Genro-Mail-ID: from its MIME part, else from the quoted text. */
export function originalIds(mail: ParsedMail, raw: string): { messageId: string | null; mailId: string | null } {
  const own = (headerText(mail, 'message-id') ?? '').trim();
  const { text, attached } = originalSource(mail, raw);
  const mailId = QUOTED_MAIL_ID.exec(text)?.[1] ?? null;
  // The first Message-ID is the original's own (a message it carries may follow); in the raw
  // message the bounce's own comes first and is skipped.
  const ids = [...text.matchAll(/^[> \t]{0,4}Message-ID:[ \t]*(?:\r?\n[ \t]+)?(<[^<>\r\n]{1,500}>)/gim)]
    .map((match) => match[1] as string)
    .filter((id) => attached || id !== own);
  return { messageId: ids[0] ?? null, mailId };
}

/** What the returned original says of its addressees and its sender. */
export interface OriginalAddresses {
  /** Envelope recipients (`Received: ... for <x>`), then To and Cc, each once. */
  recipients: string[];
  /**
   * The envelope recipient of the earliest hop that names one (the lowest
   * `for <x>`): MTAs write `for` only for a single recipient (Postfix, Exim,
   * Sendmail), so it is the address the message was sent to before any hop
   * forwarded it. Null when no Received field names one.
   */
  firstEnvelope: string | null;
  /** Its To and Cc. */
  addressees: string[];
  /** Its From, Sender and Return-Path: never the failed recipient. */
  senders: string[];
}

/**
 * Who the original was addressed to, and who sent it. `text` is the
 * original's part, or the bounce's text from where it starts quoting the original.
 */
export function originalAddresses(text: string): OriginalAddresses {
  const head = text.slice(0, MAX_ORIGINAL_CHARS).replace(/\r\n?/g, '\n');
  const end = /\n[ \t]*\n(?![ \t]*[A-Za-z-]{1,40}:)/.exec(head);
  const headers = (end === null ? head : head.slice(0, end.index)).replace(/\n[ \t]+/g, ' ');
  const envelope: string[] = [];
  const named: string[] = [];
  const senders: string[] = [];
  for (const line of headers.split('\n')) {
    const field = /^[> \t]{0,4}([A-Za-z-]{1,40}):(.*)$/.exec(line);
    if (field === null) continue;
    const name = (field[1] as string).toLowerCase();
    const value = field[2] as string;
    if (name === 'received') {
      const found = /\bfor <?([^\s<>;]{1,320}@[^\s<>;]{1,255})>?/i.exec(value);
      const address = found === null ? null : normaliseRecipient(found[1] as string);
      if (address !== null) envelope.push(address);
    } else if (name === 'to' || name === 'cc') {
      named.push(...addressesIn(value).map((found) => found.address));
    } else if (name === 'from' || name === 'sender' || name === 'return-path') {
      senders.push(...addressesIn(value).map((found) => found.address));
    }
  }
  const addressees = [...new Set(named)];
  return {
    recipients: [...new Set([...envelope, ...addressees])],
    firstEnvelope: envelope.at(-1) ?? null,
    addressees,
    senders: [...new Set(senders)],
  };
}
