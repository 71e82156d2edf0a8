/**
 * What a message in the bounce mailbox is, read with mailparser: a DSN
 * (RFC 3464, one verdict per recipient), a non-standard bounce (the MTA's own
 * wording, read through core/bounce-classify.ts's tables), a complaint (ARF,
 * RFC 5965), an auto-reply (RFC 3834), or none of these. It also finds the
 * returned original's Message-ID and X-Genro-Mail-ID, which tie the bounce to
 * our message.
 */
import { simpleParser, type Attachment, type ParsedMail } from 'mailparser';
import { bounceTypeOf, findReplyCode, findStatus, reasonOf, type BounceReason } from '../core/bounce-classify.js';

export interface RecipientVerdict {
  recipient: string | null;
  action: string | null;
  status: string | null;
  replyCode: string | null;
  diagnostic: string | null;
  remoteMta: string | null;
  bounceType: 'hard' | 'soft' | null;
  reason: BounceReason | null;
}

export type BounceKind = 'bounce' | 'delayed' | 'complaint' | 'auto_reply' | 'delivered' | 'not_bounce';

export interface BounceAnalysis {
  kind: BounceKind;
  recipients: RecipientVerdict[];
  originalMessageId: string | null;
  mailId: string | null;
  originalEnvelopeId: string | null;
  feedbackType: string | null;
}

const DSN_TYPES = new Set(['message/delivery-status', 'message/global-delivery-status']);
const ORIGINAL_TYPES = new Set(['message/rfc822', 'text/rfc822-headers', 'message/global', 'message/global-headers']);
const BOUNCE_SENDER = /mailer-daemon|postmaster|mail delivery (system|subsystem)|mail administrator|mailer daemon|mdaemon|bounce|returned mail/i;
const BOUNCE_SUBJECT = /undeliver|undelivered|delivery (status notification|failure|failed|has failed|problem|notification)|returned (mail|to sender)|failure notice|mail delivery failed|could not be delivered|non.?delivery|nondeliverable|delivery report|mail system error|rejected|warning: could not send|delayed mail|not delivered|unzustellbar|fehlgeschlagen|message you sent|mail failure|delivery incomplete|permanent failure|problem with message/i;
const AUTO_REPLY_SUBJECT = /^\s*(auto(matic)?[ -]?(reply|response|antwort)|out of (the )?office|abwesenheit|vacation|absence|ausser haus|i am (currently )?out|away from)/i;
/** Where a non-standard bounce starts quoting the original message: addresses after it are not the failed recipient. */
const ORIGINAL_MARKER = /^(-+ ?(this is a copy of|original message|below this line is a copy|a copy of the original message|the header of the original message|returned message|forwarded message|message headers follow|headers of the original)|content-type: message\/rfc822|received: from |return-path: )/im;
const ADDRESS = /<?([A-Za-z0-9._%+=!#$&'*/?^`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+)>?/g;

const headerText = (mail: ParsedMail, name: string): string | null => {
  const value = mail.headers.get(name);
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && 'text' in value && typeof value.text === 'string') return value.text;
  if (typeof value === 'object' && 'value' in value) return String((value as { value: unknown }).value);
  return String(value);
};

/** `Name: value` blocks (folded lines unfolded), separated by blank lines. */
function fieldGroups(text: string): Array<Map<string, string>> {
  return text.replace(/\r\n/g, '\n').split(/\n\s*\n/).map((block) => {
    const fields = new Map<string, string>();
    for (const line of block.replace(/\n[ \t]+/g, ' ').split('\n')) {
      const colon = line.indexOf(':');
      if (colon > 0) fields.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
    }
    return fields;
  }).filter((fields) => fields.size > 0);
}

/** `rfc822; user@example.com` -> `user@example.com`. */
const typedValue = (value: string | undefined): string | null => {
  if (value === undefined) return null;
  const semicolon = value.indexOf(';');
  const bare = (semicolon >= 0 ? value.slice(semicolon + 1) : value).trim().replace(/^<|>$/g, '');
  return bare === '' ? null : bare;
};

function verdict(fields: { recipient: string | null; action: string | null; status: string | null; replyCode: string | null; diagnostic: string | null; remoteMta: string | null }): RecipientVerdict {
  const text = fields.diagnostic ?? '';
  // A diagnostic's own enhanced status is more precise than a generic Status field (5.0.0).
  const diagnosticStatus = findStatus(text);
  const status = fields.status !== null && !/^\d\.0\.0$/.test(fields.status) ? fields.status : diagnosticStatus ?? fields.status;
  const replyCode = fields.replyCode ?? findReplyCode(text);
  const reason = reasonOf(status, text);
  return { ...fields, status, replyCode, reason, bounceType: bounceTypeOf({ action: fields.action, status, replyCode, reason }) };
}

/** RFC 3464: per-message fields, then one group per recipient. */
function readDsn(text: string): { recipients: RecipientVerdict[]; envelopeId: string | null } {
  const groups = fieldGroups(text);
  const envelopeId = groups[0]?.get('original-envelope-id') ?? null;
  const recipients = groups
    .filter((fields) => fields.has('final-recipient') || fields.has('original-recipient') || fields.has('action'))
    .map((fields) => verdict({
      recipient: typedValue(fields.get('final-recipient')) ?? typedValue(fields.get('original-recipient')),
      action: fields.get('action')?.toLowerCase().split(/\s/)[0] ?? null,
      status: findStatus(fields.get('status') ?? ''),
      replyCode: null,
      diagnostic: typedValue(fields.get('diagnostic-code')) ?? null,
      remoteMta: typedValue(fields.get('remote-mta')),
    }));
  return { recipients, envelopeId };
}

const attachmentText = (attachment: Attachment): string => attachment.content.toString('utf8');

/**
 * The delivery-status part straight from the raw message: mailparser keeps it
 * as an attachment only when it is marked as one, and otherwise folds it into
 * the text, where its fields could not be told apart from prose.
 */
function dsnFromRaw(raw: string): string | null {
  const header = /^content-type:[ \t]*message\/(?:global-)?delivery-status\b/im.exec(raw);
  if (header === null) return null;
  const rest = raw.slice(header.index);
  const blank = /\r?\n\r?\n/.exec(rest);
  if (blank === null) return null;
  const headers = rest.slice(0, blank.index);
  const afterHeaders = rest.slice(blank.index + blank[0].length);
  const boundary = /\r?\n--/.exec(afterHeaders);
  const body = boundary === null ? afterHeaders : afterHeaders.slice(0, boundary.index);
  return /content-transfer-encoding:[ \t]*base64/i.test(headers) ? Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8') : body;
}

/** The returned original's Message-ID and X-Genro-Mail-ID: from its MIME part, else from the quoted text. */
function originalIds(mail: ParsedMail, raw: string): { messageId: string | null; mailId: string | null } {
  const part = mail.attachments.find((attachment) => ORIGINAL_TYPES.has(attachment.contentType.toLowerCase()));
  const own = (headerText(mail, 'message-id') ?? '').trim();
  const source = part === undefined ? raw : attachmentText(part);
  const mailId = /^X-Genro-Mail-ID:[ \t]*(\S+)/im.exec(source)?.[1] ?? null;
  const ids = [...source.matchAll(/^Message-ID:[ \t]*(?:\r?\n[ \t]+)?(<[^>\r\n]+>)/gim)].map((match) => match[1] as string).filter((id) => id !== own);
  return { messageId: ids[ids.length - 1] ?? null, mailId };
}

/** A bounce in an MTA's own words: the failed address and the line that says why. */
function readProse(mail: ParsedMail, ownAddresses: Set<string>): RecipientVerdict[] {
  const text = (mail.text ?? '').replace(/\r\n/g, '\n');
  const marker = ORIGINAL_MARKER.exec(text);
  const body = marker === null ? text : text.slice(0, marker.index);
  const lines = body.split('\n');
  const candidates = [...body.matchAll(ADDRESS)].map((match) => (match[1] as string).toLowerCase()).filter((address) => !ownAddresses.has(address) && !BOUNCE_SENDER.test(address.split('@')[0] ?? ''));
  const recipient = candidates[0] ?? null;
  // The diagnostic: the first line with a status or a reply code, else the recipient's line and the next.
  const coded = lines.findIndex((line) => findStatus(line) !== null || /\b[45]\d\d\b/.test(line));
  const near = recipient === null ? -1 : lines.findIndex((line) => line.toLowerCase().includes(recipient));
  const at = coded >= 0 ? coded : near;
  const diagnostic = at < 0 ? body.trim().slice(0, 1000) : lines.slice(at, at + 3).join(' ').replace(/\s+/g, ' ').trim();
  const whole = body.replace(/\s+/g, ' ');
  const result = verdict({ recipient, action: null, status: findStatus(diagnostic) ?? findStatus(whole), replyCode: findReplyCode(diagnostic), diagnostic, remoteMta: null });
  // The reason may be said elsewhere in the text than the coded line.
  if (result.reason === null) {
    const reason = reasonOf(result.status, whole);
    return [{ ...result, reason, bounceType: bounceTypeOf({ action: null, status: result.status, replyCode: result.replyCode, reason }) }];
  }
  return [result];
}

export async function analyseBounce(raw: Buffer): Promise<BounceAnalysis> {
  const mail = await simpleParser(raw, { skipImageLinks: true, skipTextToHtml: true });
  const rawText = raw.toString('utf8');
  const { messageId, mailId } = originalIds(mail, rawText);
  const base = { originalMessageId: messageId, mailId, originalEnvelopeId: null, feedbackType: null };
  const types = mail.attachments.map((attachment) => attachment.contentType.toLowerCase());
  const reportType = /report-type\s*=\s*"?([a-z-]+)/i.exec(headerText(mail, 'content-type') ?? rawText.slice(0, 4096))?.[1]?.toLowerCase() ?? null;

  const feedback = mail.attachments.find((attachment) => attachment.contentType.toLowerCase() === 'message/feedback-report');
  if (feedback !== undefined || reportType === 'feedback-report') {
    const feedbackType = feedback === undefined ? null : (fieldGroups(attachmentText(feedback))[0]?.get('feedback-type') ?? null);
    return { ...base, kind: 'complaint', recipients: [], feedbackType };
  }

  const dsnPart = mail.attachments.find((attachment) => DSN_TYPES.has(attachment.contentType.toLowerCase()));
  const dsnText = dsnPart === undefined ? dsnFromRaw(rawText) : attachmentText(dsnPart);
  if (dsnText !== null) {
    const { recipients, envelopeId } = readDsn(dsnText);
    const failed = recipients.filter((recipient) => recipient.action === 'failed' || recipient.action === 'delayed' || recipient.action === null);
    const kind: BounceKind = failed.length === 0 ? 'delivered' : failed.every((recipient) => recipient.action === 'delayed') ? 'delayed' : 'bounce';
    return { ...base, originalEnvelopeId: envelopeId, kind, recipients: failed.length === 0 ? recipients : failed };
  }

  const from = headerText(mail, 'from') ?? '';
  const subject = mail.subject ?? '';
  const autoSubmitted = (headerText(mail, 'auto-submitted') ?? '').toLowerCase();
  const bounceLike = BOUNCE_SENDER.test(from) || BOUNCE_SUBJECT.test(subject) || types.some((type) => ORIGINAL_TYPES.has(type));
  const autoReply = autoSubmitted.startsWith('auto-replied') || mail.headers.has('x-autoreply') || mail.headers.has('x-autorespond') || AUTO_REPLY_SUBJECT.test(subject);
  if (autoReply && !BOUNCE_SENDER.test(from)) return { ...base, kind: 'auto_reply', recipients: [] };
  if (!bounceLike) return { ...base, kind: 'not_bounce', recipients: [] };

  const own = new Set([...(mail.from?.value ?? []), ...(Array.isArray(mail.to) ? mail.to.flatMap((to) => to.value) : mail.to?.value ?? [])]
    .map((address) => (address.address ?? '').toLowerCase()).filter((address) => address !== ''));
  const recipients = readProse(mail, own);
  return { ...base, kind: recipients[0]?.action === 'delayed' ? 'delayed' : 'bounce', recipients };
}
