/**
 * Amazon SES events by way of an SNS HTTP(S) subscription: sns.ts
 * verifies the envelope, this reads the SES event in its Message, in either the
 * notification format (notificationType) or the event-publishing one (eventType).
 */
import { findReplyCode, findStatus } from '../../core/bounce/index.js';
import { MAIL_ID_FIELD } from '../../core/message/index.js';
import type { ProviderEvent } from '../../core/provider/index.js';
import { malformed, type ProviderAdapter, type WebhookReading } from './adapter.js';
import { instantOf, MAIL_ID_KEY, objectOf, parseJson, text, type Json } from './json-fields.js';
import { createSnsVerifier, type SnsVerifierOptions } from './sns.js';

export type SesAdapterOptions = SnsVerifierOptions;

/** What one recipient's (or the message's) event says; correlation and ids are added after. */
type Draft = Pick<ProviderEvent, 'kind' | 'bounceType' | 'recipient' | 'at' | 'status' | 'reason' | 'feedbackType'>;

export function createSesAdapter(options: SesAdapterOptions): ProviderAdapter {
  const sns = createSnsVerifier(options);
  return {
    provider: 'ses',
    async receive(request, settings, now) {
      const topicArns = new Set(settings.flatMap((setting) => (setting.provider === 'ses' ? setting.topicArns : [])));
      const verdict = await sns.verify(request.body, topicArns, now);
      if (!verdict.ok) return verdict;
      const { envelope } = verdict;
      // The caller visits SubscribeURL; sns.ts has checked that it names an allowed SNS host.
      if (envelope.type === 'SubscriptionConfirmation' && envelope.subscribeUrl !== null)
        return { ok: true, events: [], confirm: envelope.subscribeUrl };
      if (envelope.type !== 'Notification') return { ok: true, events: [] };
      return readSesEvent(envelope.message, envelope.messageId, now);
    },
  };
}

/** One SNS message, one SES event: ids are the SNS MessageId (`:index` when it names several recipients). */
function readSesEvent(message: string, snsMessageId: string, now: number): WebhookReading {
  const event = objectOf(parseJson(Buffer.from(message, 'utf8')));
  const type = event === null ? null : (text(event.eventType) ?? text(event.notificationType));
  if (event === null || type === null) return malformed('the SNS Message is not an SES event');
  // Open, Click, Rendering Failure, Subscription and AmazonSnsSubscriptionSucceeded say nothing about delivery.
  if (!MAPPED_TYPES.has(type)) return { ok: true, events: [] };
  const mail = objectOf(event.mail);
  if (mail === null) return malformed(`the SES ${type} event has no mail object`);
  const mailAt = instantOf(mail.timestamp) ?? now;
  const drafts = draftsOf(type, event, mailAt);
  if (drafts === null) return malformed(`the SES ${type} event is not shaped as SES sends it`);
  const correlation = correlationOf(mail);
  const events = drafts.map((draft, index): ProviderEvent => ({
    provider: 'ses',
    eventId: drafts.length > 1 ? `${snsMessageId}:${index}` : snsMessageId,
    ...correlation,
    ...draft,
  }));
  return { ok: true, events };
}

const MAPPED_TYPES = new Set(['Bounce', 'Complaint', 'Delivery', 'Send', 'Reject', 'DeliveryDelay']);

/** Null when the type's own object or its recipient list is missing or of the wrong shape. */
function draftsOf(type: string, event: Json, mailAt: number): Draft[] | null {
  const none = { bounceType: null, status: null, reason: null, feedbackType: null } as const;
  switch (type) {
    case 'Bounce': {
      const bounce = objectOf(event.bounce);
      // Undetermined: SES could not tell; treating it as soft keeps the address on the list.
      const bounceType = bounce?.bounceType === 'Permanent' ? 'hard' : 'soft';
      const at = instantOf(bounce?.timestamp) ?? mailAt;
      return recipientsOf(bounce?.bouncedRecipients, (recipient, entry) =>
        bouncedDraft(recipient, entry, bounceType, at, text(bounce?.bounceSubType)),
      );
    }
    case 'DeliveryDelay': {
      const delay = objectOf(event.deliveryDelay);
      const at = instantOf(delay?.timestamp) ?? mailAt;
      return recipientsOf(delay?.delayedRecipients, (recipient, entry) =>
        bouncedDraft(recipient, entry, 'soft', at, text(delay?.delayType)),
      );
    }
    case 'Complaint': {
      const complaint = objectOf(event.complaint);
      const at = instantOf(complaint?.timestamp) ?? mailAt;
      const feedbackType = text(complaint?.complaintFeedbackType);
      return recipientsOf(complaint?.complainedRecipients, (recipient) => ({
        ...none,
        kind: 'complaint',
        recipient,
        at,
        feedbackType,
        reason: text(complaint?.complaintSubType),
      }));
    }
    case 'Delivery': {
      const delivery = objectOf(event.delivery);
      const list = delivery?.recipients;
      if (!Array.isArray(list)) return null;
      const at = instantOf(delivery?.timestamp) ?? mailAt;
      const response = text(delivery?.smtpResponse);
      return list.map((recipient) => ({
        ...none,
        kind: 'delivered',
        recipient: text(recipient),
        at,
        status: statusIn(response),
        reason: response,
      }));
    }
    // Send and Reject concern the message before any recipient is tried: one event, no recipient.
    case 'Send':
      return [{ ...none, kind: 'accepted', recipient: null, at: mailAt }];
    case 'Reject':
      return [{ ...none, kind: 'dropped', recipient: null, at: mailAt, reason: text(objectOf(event.reject)?.reason) }];
    default:
      return null;
  }
}

/** A recipient's bounce or delay: its own status, else one read from its diagnostic; the diagnostic, else the event's kind, as the reason. */
function bouncedDraft(
  recipient: string | null,
  entry: Json,
  bounceType: 'hard' | 'soft',
  at: number,
  kind: string | null,
): Draft {
  const diagnostic = text(entry.diagnosticCode);
  return {
    kind: 'bounced',
    bounceType,
    recipient,
    at,
    status: text(entry.status) ?? statusIn(diagnostic),
    reason: diagnostic ?? kind,
    feedbackType: null,
  };
}

/** SES's recipient lists are arrays of objects naming emailAddress; anything else is not SES. */
function recipientsOf(list: unknown, draft: (recipient: string | null, entry: Json) => Draft): Draft[] | null {
  if (!Array.isArray(list)) return null;
  const entries = list.map(objectOf);
  if (entries.some((entry) => entry === null)) return null;
  return (entries as Json[]).map((entry) => draft(text(entry.emailAddress), entry));
}

/** providerMessageId is SES's id (what its SMTP 250 reply names); the rest are our headers echoed back. */
function correlationOf(mail: Json): Pick<ProviderEvent, 'providerMessageId' | 'mailId' | 'messageIdHeader'> {
  const headers = Array.isArray(mail.headers) ? mail.headers.map(objectOf) : [];
  const header = (name: string): string | null => {
    const found = headers.find((entry) => typeof entry?.name === 'string' && entry.name.toLowerCase() === name);
    return text(found?.value);
  };
  // The tag our relay sets (SES tags carry arrays of strings), read when SES truncated the headers.
  const tag = objectOf(mail.tags)?.[MAIL_ID_KEY];
  const tagged = Array.isArray(tag) ? text(tag[0]) : null;
  return {
    providerMessageId: text(mail.messageId),
    mailId: header(MAIL_ID_FIELD) ?? tagged,
    messageIdHeader: text(objectOf(mail.commonHeaders)?.messageId) ?? header('message-id'),
  };
}

/** The enhanced status (RFC 3463) in an SMTP reply or diagnostic, else its reply code: the bounce parser's own readers. */
const statusIn = (reply: string | null): string | null =>
  reply === null ? null : (findStatus(reply) ?? findReplyCode(reply));
