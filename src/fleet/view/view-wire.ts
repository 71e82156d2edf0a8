/**
 * The fleet view's messages as they cross between nodes: the snake_case shape with epoch-second
 * `_ts` instants that the previous version sent (the API's shape), so that nodes of two versions
 * answer each other's reads during a rolling upgrade. A node maps the core's read models to it
 * when it answers, and the asking node maps the answer back. Seconds are the grain the API shows,
 * so the asking node words a message as the holding node would have.
 */
import { epochSeconds } from '../../core/index.js';
import {
  type MessageDetail,
  type MessageTimelineEvent,
  type MessageRead,
  messageStatus,
  type MessageSummary,
  type WaitingExplanation,
  type WaitingReason,
  NO_PAUSE_REASON,
  waitingSentence,
} from '../../core/message/index.js';
import type { PecReceiptListing } from '../../core/pec/index.js';

type Wire = Record<string, unknown>;

/** A field as it crosses: its wire name, its core name, and whether it is an instant (`_ts` seconds, `…At` ms). */
type Field = readonly [wire: string, core: string, instant?: 'ts' | 'ts0'];

// In the order the previous version sent them. `ts0`: never null (0 when missing), as the API answers.
// prettier-ignore
const SUMMARY_FIELDS: readonly Field[] = [
  ['pk', 'pk'], ['id', 'clientId'], ['tenant_id', 'tenantId'], ['account_id', 'accountId'], ['status', 'status'], ['state', 'state'],
  ['priority', 'priority'], ['batch_code', 'batchCode'], ['subject', 'subject'], ['mail_from', 'mailFrom'], ['rcpt_to', 'rcptTo'],
  ['attempts', 'attempts'], ['created_ts', 'createdAt', 'ts0'], ['next_attempt_ts', 'nextAttemptAt', 'ts'], ['sent_ts', 'sentAt', 'ts'],
  ['error_ts', 'errorAt', 'ts'], ['error', 'error'], ['bounce_type', 'bounceType'],
];

// prettier-ignore
const DETAIL_FIELDS: readonly Field[] = [
  ['pk', 'pk'], ['id', 'clientId'], ['tenant_id', 'tenantId'], ['account_id', 'accountId'], ['priority', 'priority'], ['batch_code', 'batchCode'],
  ['source', 'source'], ['state', 'state'], ['suspended', 'suspended'], ['attempts', 'attempts'], ['mail_from', 'mailFrom'],
  ['rcpt_to', 'rcptTo'], ['subject', 'subject'], ['message_id', 'messageId'], ['size_bytes', 'sizeBytes'],
  ['created_ts', 'createdAt', 'ts0'], ['updated_ts', 'updatedAt', 'ts0'], ['next_attempt_ts', 'nextAttemptAt', 'ts'],
  ['deferred_ts', 'deferredAt', 'ts'], ['deferred_reason', 'deferredReason'], ['sent_ts', 'sentAt', 'ts'], ['error_ts', 'errorAt', 'ts'],
  ['error', 'error'], ['last_reply_code', 'lastReplyCode'], ['last_enhanced_status', 'lastEnhancedStatus'],
  ['refused_recipients', 'refusedRecipients'], ['reported_ts', 'reportedAt', 'ts'], ['bounce_type', 'bounceType'],
  ['bounce_code', 'bounceCode'], ['bounce_reason', 'bounceReason'], ['bounce_ts', 'bounceAt', 'ts'],
  ['bounce_reported_ts', 'bounceReportedAt', 'ts'], ['complaint_ts', 'complaintAt', 'ts'], ['complaint_type', 'complaintType'],
  ['provider_message_id', 'providerMessageId'], ['provider_state', 'providerState'], ['provider_state_ts', 'providerStateAt', 'ts'],
  ['pec_rda_ts', 'pecRdaAt', 'ts'], ['pec_rdc_ts', 'pecRdcAt', 'ts'], ['pec_error', 'pecError'], ['pec_error_ts', 'pecErrorAt', 'ts'],
];
/** Fields since issue 45: sent only when set, so that a message with neither has the previous version's shape. */
// prettier-ignore
const DETAIL_FIELDS_SINCE_45: readonly Field[] = [
  ['body_shredded_ts', 'bodyShreddedAt', 'ts'], ['erased_ts', 'erasedAt', 'ts'], ['held_for', 'heldFor'],
];

// prettier-ignore
const EVENT_FIELDS: readonly Field[] = [
  ['event_type', 'type'], ['ts', 'at', 'ts0'], ['attempt', 'attempt'], ['reply_code', 'replyCode'],
  ['enhanced_status', 'enhancedStatus'], ['text', 'text'], ['data', 'data'],
];

// prettier-ignore
const PEC_RECEIPT_FIELDS: readonly Field[] = [
  ['receipt_id', 'receiptId'], ['tenant_id', 'tenantId'], ['account_id', 'accountId'], ['message_id', 'clientId'],
  ['receipt_type', 'receiptType'], ['recognised_by', 'recognisedBy'], ['matched_by', 'matchedBy'], ['recipient', 'recipient'],
  ['error', 'error'], ['error_detail', 'errorDetail'], ['issuer', 'issuer'], ['identificativo', 'identificativo'],
  ['referenced_message_id', 'referencedMessageId'], ['header_message_id', 'headerMessageId'], ['subject', 'subject'],
  ['issued_ts', 'issuedAt', 'ts'], ['received_ts', 'receivedAt', 'ts0'], ['size_bytes', 'sizeBytes'], ['complete', 'complete'],
  ['sha256', 'sha256'],
];

const seconds = (at: unknown, zero: boolean): number | null => {
  const value = epochSeconds(typeof at === 'number' ? at : null);
  return zero ? (value ?? 0) : value;
};
const millis = (ts: unknown): number | null => (typeof ts === 'number' ? ts * 1000 : null);

function toWire(fields: readonly Field[], value: object): Wire {
  const from = value as Wire;
  return Object.fromEntries(
    fields.map(([wire, core, instant]) => [
      wire,
      instant === undefined ? from[core] : seconds(from[core], instant === 'ts0'),
    ]),
  );
}

function fromWire<T>(fields: readonly Field[], wire: Wire): T {
  return Object.fromEntries(
    fields.map(([name, core, instant]) => [core, instant === undefined ? wire[name] : millis(wire[name])]),
  ) as T;
}

/** A page's message as it crosses. */
export const summaryToWire = (summary: MessageSummary): Wire => toWire(SUMMARY_FIELDS, summary);
export const summaryFromWire = (wire: Wire): MessageSummary => fromWire(SUMMARY_FIELDS, wire);

/** One message's read as it crosses: the message with its status, its timeline, why it waits in words, its receipts. */
export function detailToWire(read: MessageRead): Wire {
  const { message } = read;
  const status = messageStatus(message.state, message.suspended, message.bounceAt !== null);
  return {
    message: {
      ...toWire(DETAIL_FIELDS, message),
      status,
      ...Object.fromEntries(
        Object.entries(toWire(DETAIL_FIELDS_SINCE_45, message)).filter(([, value]) => value !== null),
      ),
    },
    events: read.events.map((event) => toWire(EVENT_FIELDS, event)),
    why: {
      waiting: read.why.waiting,
      reasons: read.why.reasons.map((reason) => ({
        code: reason.code,
        message: waitingSentence(reason, message),
        until_ts: seconds(reason.untilAt, false),
      })),
      expires_ts: seconds(read.why.expiresAt, false),
    },
    pec_receipts: read.pecReceipts.map((receipt) => toWire(PEC_RECEIPT_FIELDS, receipt)),
  };
}

export function detailFromWire(wire: Wire): MessageRead {
  const message = fromWire<MessageDetail>([...DETAIL_FIELDS, ...DETAIL_FIELDS_SINCE_45], (wire.message ?? {}) as Wire);
  message.heldFor ??= null; // absent from a node older than per-destination limits, and when not held
  const why = (wire.why ?? {}) as Wire;
  const reasons = Array.isArray(why.reasons) ? (why.reasons as Wire[]) : [];
  return {
    message,
    events: (Array.isArray(wire.events) ? (wire.events as Wire[]) : []).map((event) =>
      fromWire<MessageTimelineEvent>(EVENT_FIELDS, event),
    ),
    why: {
      waiting: why.waiting === true,
      reasons: reasons.map(reasonFromWire),
      expiresAt: millis(why.expires_ts),
    } satisfies WaitingExplanation,
    pecReceipts: (Array.isArray(wire.pec_receipts) ? (wire.pec_receipts as Wire[]) : []).map((receipt) =>
      fromWire<PecReceiptListing>(PEC_RECEIPT_FIELDS, receipt),
    ),
  };
}

/**
 * A worded reason back to data. What a reason carries beyond the message's own fields crossed only
 * in its sentence, so it is read back from there; the sentence is worded again from it unchanged.
 */
function reasonFromWire(wire: Wire): WaitingReason {
  const code = wire.code as WaitingReason['code'];
  const text = typeof wire.message === 'string' ? wire.message : '';
  const untilAt = millis(wire.until_ts);
  switch (code) {
    case 'rate_limited':
    case 'scheduled':
    case 'retry_backoff':
      return { code, untilAt: untilAt ?? 0 };
    case 'account_paused': {
      const said = /" is paused: (.*) \(saving the account resumes it\)$/s.exec(text)?.[1] ?? NO_PAUSE_REASON;
      return { code, untilAt: null, pausedReason: said === NO_PAUSE_REASON ? null : said };
    }
    case 'suppressed': {
      const list = /since it was accepted: (.*)$/s.exec(text)?.[1] ?? '';
      return { code, untilAt: null, recipients: list === '' ? [] : list.split(', ') };
    }
    case 'relay_backoff': {
      const perMinute = / sends ([\d.]+) a minute for now/.exec(text)?.[1];
      return { code, untilAt: untilAt ?? 0, perMinute: perMinute === undefined ? 0 : Number(perMinute) };
    }
    case 'destination_limited': {
      const destination = /destination "(.*)", which has used/s.exec(text)?.[1] ?? '';
      return { code, untilAt: untilAt ?? 0, destination };
    }
    case 'due': {
      const pool = /\(pool of (\d+)\)$/.exec(text)?.[1];
      return { code, untilAt: null, poolSize: pool === undefined ? null : Number(pool) };
    }
    default:
      return { code, untilAt: null };
  }
}
