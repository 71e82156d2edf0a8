/**
 * The documented header changes of an SMTP submission (README "SMTP
 * submission"), decided from its header fields:
 *   - our control headers (X-Mail-Proxy-*) are read and removed;
 *   - X-Genro-Mail-ID is kept when the client set it (it is the client id) and
 *     added otherwise; Message-ID and Date are added when missing (RFC 6409 §8);
 *   - a Received trace header is put on top (RFC 5321 §4.4), unless turned off.
 * Nothing else in the message changes.
 */
import {
  isClientId,
  CLIENT_ID_RULE,
  MAIL_ID_FIELD,
  MAIL_ID_HEADER,
  parsePriority,
  type Priority,
} from '../../core/message/index.js';
import { decodeEncodedWords } from './encoded-words.js';
import type { HeaderField } from './header-section.js';
import { replies, type SmtpReply } from './replies.js';

export const CONTROL_HEADERS = [
  'x-mail-proxy-account',
  'x-mail-proxy-priority',
  'x-mail-proxy-batch',
  'x-mail-proxy-deferred-ts',
] as const;
const PRINTABLE = /^[^\r\n\0]{1,128}$/;

export interface SubmissionHeaders {
  /** The client id: X-Genro-Mail-ID as given, or a new one. */
  id: string;
  accountId: string | null;
  priority: Priority | null;
  batchCode: string | null;
  /** Epoch ms. */
  deferredUntil: number | null;
  subject: string;
  messageId: string;
  prepend: string;
  drop: HeaderField[];
}

export interface HeaderContext {
  newId: () => string;
  now: number;
  mailFrom: string;
  /** The Received header's text, or null when none is added. */
  received: ((id: string) => string) | null;
}

export function decideHeaders(fields: readonly HeaderField[], context: HeaderContext): SubmissionHeaders | SmtpReply {
  // Each field's name lower-cased once (this runs for every message received).
  const byName = new Map<string, HeaderField[]>();
  for (const field of fields) {
    const name = field.name.toLowerCase();
    const same = byName.get(name);
    if (same === undefined) byName.set(name, [field]);
    else same.push(field);
  }
  const named = (name: string): readonly HeaderField[] => byName.get(name) ?? [];
  const first = (name: string): string | null => named(name)[0]?.value ?? null;

  const genro = named(MAIL_ID_FIELD);
  if (genro.length > 1) return replies.badControlHeader(MAIL_ID_HEADER, 'given more than once');
  const givenId = genro[0]?.value ?? null;
  if (givenId !== null && !isClientId(givenId)) return replies.badControlHeader(MAIL_ID_HEADER, CLIENT_ID_RULE);

  const account = first('x-mail-proxy-account');
  if (account !== null && !PRINTABLE.test(account))
    return replies.badControlHeader('X-Mail-Proxy-Account', 'not an account id');
  const priorityText = first('x-mail-proxy-priority');
  const priority = priorityText === null ? null : parsePriority(priorityText);
  if (priority === undefined)
    return replies.badControlHeader('X-Mail-Proxy-Priority', '0-3 or immediate, high, normal, low');
  const batch = first('x-mail-proxy-batch');
  if (batch !== null && (!PRINTABLE.test(batch) || batch === '*'))
    return replies.badControlHeader('X-Mail-Proxy-Batch', 'a batch code of 1-128 characters, not "*"');
  const deferredText = first('x-mail-proxy-deferred-ts');
  const deferredSeconds = deferredText === null ? null : Number(deferredText);
  if (
    deferredSeconds !== null &&
    !(deferredText !== '' && Number.isFinite(deferredSeconds) && deferredSeconds >= 0 && deferredSeconds <= 32503680000)
  ) {
    return replies.badControlHeader('X-Mail-Proxy-Deferred-Ts', 'epoch seconds');
  }

  const id = givenId ?? context.newId();
  const messageIdGiven = first('message-id');
  const messageId = messageIdGiven ?? `<${context.newId()}@${domainOf(context.mailFrom)}>`;
  const lines: string[] = [];
  if (context.received !== null) lines.push(context.received(id));
  if (givenId === null) lines.push(`${MAIL_ID_HEADER}: ${id}`);
  if (messageIdGiven === null) lines.push(`Message-ID: ${messageId}`);
  if (first('date') === null) lines.push(`Date: ${rfc5322Date(context.now)}`);

  return {
    id,
    accountId: account,
    priority,
    batchCode: batch,
    deferredUntil: deferredSeconds === null ? null : Math.round(deferredSeconds * 1000),
    subject: decodeEncodedWords(first('subject') ?? '').slice(0, 998),
    messageId,
    prepend: lines.map((line) => `${line}\r\n`).join(''),
    drop: CONTROL_HEADERS.flatMap(named),
  };
}

function domainOf(address: string): string {
  const domain = address.slice(address.lastIndexOf('@') + 1);
  return /^[A-Za-z0-9.-]+$/.test(domain) && domain.includes('.') ? domain : 'mailproxy.invalid';
}

/** `Sat, 21 Nov 2026 10:00:00 +0000` */
export function rfc5322Date(ms: number): string {
  return new Date(ms).toUTCString().replace(/GMT$/, '+0000');
}
