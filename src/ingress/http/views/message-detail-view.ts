/**
 * One message as GET /messages/{id} answers it: the core's read model
 * (core/message/admin.ts) in the API's snake_case, its instants in epoch
 * seconds, with its derived `status`, its timeline, why it waits and its PEC
 * receipts.
 */
import { epochSeconds } from '../../../core/index.js';
import {
  type MessageDetail,
  type MessageTimelineEvent,
  type MessageRead,
  type HandoffState,
  type Priority,
  messageStatus,
  type MessageStatus,
} from '../../../core/message/index.js';
import { viewPecReceipt, type PecReceiptView } from './pec-receipt-view.js';
import { viewWaiting, type WaitingView } from './waiting-view.js';

export interface MessageView {
  pk: number;
  id: string;
  tenant_id: string;
  account_id: string;
  priority: Priority;
  batch_code: string | null;
  source: 'http' | 'smtp';
  state: HandoffState;
  suspended: boolean;
  attempts: number;
  mail_from: string;
  rcpt_to: string[];
  subject: string | null;
  message_id: string | null;
  size_bytes: number;
  created_ts: number;
  updated_ts: number;
  next_attempt_ts: number | null;
  deferred_ts: number | null;
  deferred_reason: string | null;
  sent_ts: number | null;
  error_ts: number | null;
  error: string | null;
  last_reply_code: number | null;
  last_enhanced_status: string | null;
  refused_recipients: unknown[] | null;
  reported_ts: number | null;
  bounce_type: string | null;
  bounce_code: string | null;
  bounce_reason: string | null;
  bounce_ts: number | null;
  bounce_reported_ts: number | null;
  complaint_ts: number | null;
  complaint_type: string | null;
  provider_message_id: string | null;
  provider_state: string | null;
  provider_state_ts: number | null;
  pec_rda_ts: number | null;
  pec_rdc_ts: number | null;
  pec_error: string | null;
  pec_error_ts: number | null;
  body_shredded_ts: number | null;
  erased_ts: number | null;
  status: MessageStatus;
}

export interface MessageEventView {
  event_type: string;
  ts: number;
  attempt: number;
  reply_code: number | null;
  enhanced_status: string | null;
  text: string | null;
  data: Record<string, unknown> | null;
}

export interface MessageDetailView {
  message: MessageView;
  events: MessageEventView[];
  why: WaitingView;
  pec_receipts: PecReceiptView[];
}

/** The message's derived status: `suspended` while held, `bounced` once returned. */
export const messageStatusOf = (m: MessageDetail): MessageStatus =>
  messageStatus(m.state, m.suspended, m.bounceAt !== null);

// Field order as the API has always answered it.
export function viewMessage(m: MessageDetail): MessageView {
  return {
    pk: m.pk,
    id: m.clientId,
    tenant_id: m.tenantId,
    account_id: m.accountId,
    priority: m.priority,
    batch_code: m.batchCode,
    source: m.source,
    state: m.state,
    suspended: m.suspended,
    attempts: m.attempts,
    mail_from: m.mailFrom,
    rcpt_to: m.rcptTo,
    subject: m.subject,
    message_id: m.messageId,
    size_bytes: m.sizeBytes,
    created_ts: epochSeconds(m.createdAt) ?? 0,
    updated_ts: epochSeconds(m.updatedAt) ?? 0,
    next_attempt_ts: epochSeconds(m.nextAttemptAt),
    deferred_ts: epochSeconds(m.deferredAt),
    deferred_reason: m.deferredReason,
    sent_ts: epochSeconds(m.sentAt),
    error_ts: epochSeconds(m.errorAt),
    error: m.error,
    last_reply_code: m.lastReplyCode,
    last_enhanced_status: m.lastEnhancedStatus,
    refused_recipients: m.refusedRecipients,
    reported_ts: epochSeconds(m.reportedAt),
    bounce_type: m.bounceType,
    bounce_code: m.bounceCode,
    bounce_reason: m.bounceReason,
    bounce_ts: epochSeconds(m.bounceAt),
    bounce_reported_ts: epochSeconds(m.bounceReportedAt),
    complaint_ts: epochSeconds(m.complaintAt),
    complaint_type: m.complaintType,
    provider_message_id: m.providerMessageId,
    provider_state: m.providerState,
    provider_state_ts: epochSeconds(m.providerStateAt),
    pec_rda_ts: epochSeconds(m.pecRdaAt),
    pec_rdc_ts: epochSeconds(m.pecRdcAt),
    pec_error: m.pecError,
    pec_error_ts: epochSeconds(m.pecErrorAt),
    body_shredded_ts: epochSeconds(m.bodyShreddedAt),
    erased_ts: epochSeconds(m.erasedAt),
    status: messageStatusOf(m),
  };
}

export function viewMessageEvent(event: MessageTimelineEvent): MessageEventView {
  return {
    event_type: event.type,
    ts: epochSeconds(event.at) ?? 0,
    attempt: event.attempt,
    reply_code: event.replyCode,
    enhanced_status: event.enhancedStatus,
    text: event.text,
    data: event.data,
  };
}

export function viewMessageDetail(read: MessageRead): MessageDetailView {
  return {
    message: viewMessage(read.message),
    events: read.events.map(viewMessageEvent),
    why: viewWaiting(read.why, read.message),
    pec_receipts: read.pecReceipts.map(viewPecReceipt),
  };
}
