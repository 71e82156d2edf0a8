/**
 * What a message in the bounce mailbox is, read with mailparser: a DSN
 * (RFC 3464, one verdict per recipient), an SES notification, a non-standard
 * bounce (the MTA's own wording, read through core/bounce/classify.ts's
 * tables), a complaint (ARF, RFC 5965), an auto-reply (RFC 3834), or none of
 * these. It also finds the returned original's Message-ID and
 * X-Genro-Mail-ID, which tie the bounce to our message. Never throws: a
 * message it cannot read is `not_bounce`.
 */
import { simpleParser, type Attachment, type ParsedMail } from 'mailparser';
import {
  isAutoReplySubject,
  dsnOutcomeOf,
  permanenceOf,
  isListRefusalSubject,
  refusingListIn,
} from '../core/bounce/index.js';
import { addressesIn } from './addresses.js';
import type { BounceAnalysis, BounceKind, RecipientVerdict } from './bounce-analysis.js';
import { dsnFromRaw, dsnFromText, fieldGroups, readDsn, type DsnRecipientFields } from './dsn-fields.js';
import { headerText, isOriginalType, originalAddresses, originalIds, originalSource } from './original-message.js';
import { proseAbout, proseBody, readProseText } from './prose-bounce.js';
import { ourRecipientIn, rcptToIn, type RecipientHints } from './report-recipient.js';
import { verdictOf } from './recipient-verdict.js';
import { readSesNotification, type SesNotification } from './ses-notification.js';

export type { BounceAnalysis, RecipientVerdict } from './bounce-analysis.js';

const DSN_TYPES = new Set(['message/delivery-status', 'message/global-delivery-status']);
const BOUNCE_SENDER =
  /mailer-daemon|postmaster|post_master|mail delivery (system|subsystem)|mail administrator|mailer daemon|mdaemon|bounce|returned mail|ndr administrator/i;
const BOUNCE_SUBJECT =
  /undeliver|undelivered|delivery (status notification|failure|failed|has failed|problem|notification)|returned (mail|to sender)|failure notice|mail delivery failed|could not be delivered|non.?delivery|nondeliverable|delivery report|mail system error|rejected|warning: could not send|delayed mail|not delivered|unzustellbar|fehlgeschlagen|message you sent|mail failure|delivery incomplete|permanent failure|problem with message|delivery status/i;
/** What the reporting side sends its notices with: an empty envelope sender (RFC 5321 §4.5.5). */
const NULL_SENDER = /^<\s*>$/;

const empty = { originalMessageId: null, mailId: null, originalEnvelopeId: null, feedbackType: null };

export async function analyseBounce(raw: Buffer): Promise<BounceAnalysis> {
  let mail: ParsedMail;
  try {
    mail = await simpleParser(raw, { skipImageLinks: true, skipTextToHtml: true });
  } catch {
    // Beyond what mailparser accepts (absurd nesting, broken encodings): nothing to act on.
    return { ...empty, kind: 'not_bounce', method: 'none', recipients: [] };
  }
  try {
    return analyseParsed(mail, raw.toString('utf8'));
  } catch {
    return { ...empty, kind: 'not_bounce', method: 'none', recipients: [] };
  }
}

/**
 * The complaining recipient of an ARF report (RFC 5965 Original-Rcpt-To, or
 * Removal-Recipient), when the provider did not redact it.
 */
function complainants(feedback: Attachment | undefined): RecipientVerdict[] {
  if (feedback === undefined) return [];
  const fields = fieldGroups(feedback.content.toString('utf8'))[0];
  const named = fields?.get('original-rcpt-to') ?? fields?.get('removal-recipient') ?? null;
  const address = named === null ? null : (addressesIn(named)[0]?.address ?? null);
  return address === null
    ? []
    : [
        {
          recipient: address,
          alternates: [],
          action: null,
          status: null,
          replyCode: null,
          diagnostic: null,
          remoteMta: null,
          bounceType: null,
          reason: null,
        },
      ];
}

/** A multipart whose boundaries never come leaves mailparser no text: the raw body is the text then. */
function rawBody(rawText: string): string {
  const end = /\r?\n\r?\n/.exec(rawText);
  return end === null ? '' : rawText.slice(end.index + end[0].length, end.index + end[0].length + 256 * 1024);
}

/** The bounce's own addresses and the original's sender: never the failed recipient. */
function ownAddresses(mail: ParsedMail, senders: string[]): Set<string> {
  const listed = [mail.from, ...(Array.isArray(mail.to) ? mail.to : [mail.to])].flatMap((field) => field?.value ?? []);
  return new Set(
    [...listed.map((address) => (address.address ?? '').toLowerCase()), ...senders].filter((address) => address !== ''),
  );
}

/** X-Failed-Recipients (Exim, Gmail): the addresses that failed, when the bounce has no report. */
function failedRecipientsHeader(mail: ParsedMail): string[] {
  return addressesIn(headerText(mail, 'x-failed-recipients') ?? '').map((found) => found.address);
}

type Base = Pick<BounceAnalysis, 'originalMessageId' | 'mailId' | 'originalEnvelopeId' | 'feedbackType'>;

function analyseParsed(mail: ParsedMail, rawText: string): BounceAnalysis {
  const { messageId, mailId } = originalIds(mail, rawText);
  const base: Base = { originalMessageId: messageId, mailId, originalEnvelopeId: null, feedbackType: null };
  const reportType =
    /report-type\s*=\s*"?([a-z-]+)/i
      .exec(headerText(mail, 'content-type') ?? rawText.slice(0, 4096))?.[1]
      ?.toLowerCase() ?? null;
  const text = (mail.text ?? '').trim() === '' ? rawBody(rawText) : (mail.text ?? '');

  const feedback = mail.attachments.find(
    (attachment) => attachment.contentType.toLowerCase() === 'message/feedback-report',
  );
  if (feedback !== undefined || reportType === 'feedback-report') {
    const feedbackType =
      feedback === undefined ? null : (fieldGroups(feedback.content.toString('utf8'))[0]?.get('feedback-type') ?? null);
    return { ...base, kind: 'complaint', method: 'arf', recipients: complainants(feedback), feedbackType };
  }
  const ses = text.includes('notificationType') || text.includes('eventType') ? readSesNotification(text) : null;
  if (ses !== null) return sesAnalysis(ses, base);

  const failedHeader = failedRecipientsHeader(mail);
  const dsnPart = mail.attachments.find((attachment) => DSN_TYPES.has(attachment.contentType.toLowerCase()));
  const dsnText = dsnPart === undefined ? (dsnFromRaw(rawText) ?? dsnFromText(text)) : dsnPart.content.toString('utf8');
  const dsn = dsnText === null ? null : readDsn(dsnText);
  if (dsn !== null && dsn.recipients.length > 0)
    return reportAnalysis(dsn, text, recipientHints(mail, rawText, text, failedHeader), base);

  const reportsFailure = reportType === 'delivery-status' || dsn !== null || failedHeader.length > 0;
  const kind = kindOf(mail, text, reportsFailure);
  // An auto-reply or ordinary mail reports nothing about our message: a message it forwards or quotes is not a returned original.
  if (kind !== 'bounce')
    return { ...empty, kind, method: kind === 'auto_reply' ? 'autoreply' : 'none', recipients: [] };
  const recipients = [proseVerdict(mail, text, returnedOriginal(mail, rawText, text), failedHeader)];
  return { ...base, kind: recipients[0]?.action === 'delayed' ? 'delayed' : 'bounce', method: 'heuristic', recipients };
}

function sesAnalysis(ses: SesNotification, base: Base): BounceAnalysis {
  if (ses.type === 'complaint') return { ...base, kind: 'complaint', method: 'heuristic', recipients: [] };
  if (ses.type === 'delivery' || ses.recipients.length === 0)
    return { ...base, kind: 'delivered', method: 'none', recipients: [] };
  // The subtype is read after each recipient's own diagnostic, in the words core's SES table knows.
  const subType = ses.bounceSubType === null ? [] : [`SES bounceSubType: ${ses.bounceSubType}`];
  const recipients = ses.recipients.map((fields) =>
    verdictOf({ ...fields, action: fields.action ?? (ses.bounceType === 'Transient' ? 'delayed' : 'failed') }, subType),
  );
  return {
    ...base,
    kind: recipients.every((recipient) => recipient.action === 'delayed') ? 'delayed' : 'bounce',
    method: 'heuristic',
    recipients,
  };
}

/** The returned original: its MIME part, else where the prose starts quoting it (never the bounce's own headers). */
function returnedOriginal(mail: ParsedMail, rawText: string, text: string): string {
  const original = originalSource(mail, rawText);
  return original.attached ? original.text : proseBody(text).quotedOriginal;
}

function recipientHints(mail: ParsedMail, rawText: string, text: string, failedHeader: string[]): RecipientHints {
  const original = originalAddresses(returnedOriginal(mail, rawText, text));
  return { failedHeader, rcptTo: rcptToIn(proseBody(text).body), original, own: ownAddresses(mail, original.senders) };
}

/** RFC 3464: the failed and delayed recipients; a report of deliveries only is no bounce. */
function reportAnalysis(
  dsn: { recipients: DsnRecipientFields[]; envelopeId: string | null },
  text: string,
  hints: RecipientHints,
  base: Base,
): BounceAnalysis {
  const withRecipient = dsn.recipients.map((fields) => ourRecipientIn(fields, hints, dsn.recipients.length));
  // Read once: the prose, and what it says about each recipient.
  const { body } = proseBody(text);
  const groups = withRecipient.map((fields) => ({
    fields,
    about: fields.recipient === null ? null : proseAbout(text, fields.recipient),
  }));
  // The whole prose speaks of the recipient only when the report names no other.
  const prose = groups.length === 1 ? body : '';
  const failed = groups.filter(
    ({ fields, about }) =>
      dsnOutcomeOf({
        action: fields.action,
        status: fields.status,
        evidence: [fields.diagnostic ?? '', about ?? '', prose].join('\n'),
      }) !== 'delivered',
  );
  if (failed.length === 0)
    return {
      ...base,
      originalEnvelopeId: dsn.envelopeId,
      kind: 'delivered',
      method: 'none',
      recipients: withRecipient.map((fields) => verdictOf(fields)),
    };
  const recipients = failed.map(({ fields, about }) => dsnVerdict(fields, about, body));
  const kind: BounceKind = recipients.every((recipient) => recipient.action === 'delayed') ? 'delayed' : 'bounce';
  return { ...base, originalEnvelopeId: dsn.envelopeId, kind, method: 'dsn', recipients };
}

/** A message without a report: a bounce by its sender, subject or returned original; else an auto-reply or ordinary mail. */
function kindOf(mail: ParsedMail, text: string, reportsFailure: boolean): 'bounce' | 'auto_reply' | 'not_bounce' {
  const from = headerText(mail, 'from') ?? '';
  const subject = mail.subject ?? '';
  const nullSender = NULL_SENDER.test((headerText(mail, 'return-path') ?? '').trim());
  // A returned message alone is no bounce (people forward mail as attachments); with a failure notice it is.
  const returnsOriginal =
    mail.attachments.some((attachment) => isOriginalType(attachment.contentType)) &&
    (nullSender || permanenceOf(text) !== null);
  const bounceLike =
    reportsFailure ||
    BOUNCE_SENDER.test(from) ||
    BOUNCE_SUBJECT.test(subject) ||
    isListRefusalSubject(subject) ||
    returnsOriginal;
  const autoSubmitted = (headerText(mail, 'auto-submitted') ?? '').toLowerCase();
  const autoReply =
    autoSubmitted.startsWith('auto-replied') ||
    mail.headers.has('x-autoreply') ||
    mail.headers.has('x-autorespond') ||
    isAutoReplySubject(subject);
  if (autoReply && !BOUNCE_SENDER.test(from) && !reportsFailure) return 'auto_reply';
  return bounceLike ? 'bounce' : 'not_bounce';
}

/**
 * A report's recipient group, with the human-readable part's words about it
 * (its diagnostic when the group has none) and the whole prose as the last
 * place to look for a reason and the SMTP phase.
 */
function dsnVerdict(fields: DsnRecipientFields, about: string | null, body: string): RecipientVerdict {
  if (about !== null && fields.diagnostic === null) return verdictOf({ ...fields, diagnostic: about }, [body], body);
  return verdictOf(fields, about === null ? [body] : [about, body], body);
}

/** A bounce without a report: the recipient and the reason from its prose, hard unless it says it is a warning. */
function proseVerdict(mail: ParsedMail, text: string, returned: string, failedHeader: string[]): RecipientVerdict {
  const original = originalAddresses(returned);
  // The returned original names the failed recipient only when it names one (RFC 3462 returns the whole message, every
  // recipient): its first hop's envelope recipient, else its only addressee.
  const onlyRecipient = [
    ...(original.firstEnvelope === null ? [] : [original.firstEnvelope]),
    ...(original.recipients.length === 1 ? original.recipients : []),
  ];
  // A list server's refusal names the list, the address we sent to, in its own words.
  const list = failedHeader.length === 0 ? refusingListIn(proseBody(text).body) : null;
  const findings = readProseText(
    text,
    ownAddresses(mail, original.senders),
    list === null ? failedHeader : [list],
    onlyRecipient,
  );
  const action = permanenceOf(findings.body) === 'soft' ? 'delayed' : 'failed';
  return verdictOf(
    { recipient: findings.recipient, action, status: null, diagnostic: findings.diagnostic, remoteMta: null },
    [findings.body],
    findings.body,
  );
}
