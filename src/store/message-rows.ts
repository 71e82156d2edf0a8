/** Message rows -> the read model: instants become the contract's epoch-second `_ts` fields. */
import { epochSeconds } from '../core/clock.js';
import type { MessageDetail, MessageEventView } from '../core/message-admin.js';
import type { HandoffState, Priority } from '../core/message.js';
import { MESSAGE_EVENT_PREFIX } from './message-event-writer.js';

export interface DetailRow {
  pk: number;
  tenant_id: string;
  id: string;
  account_id: string;
  priority: Priority;
  batch_code: string | null;
  source: 'http' | 'smtp';
  state: HandoffState;
  suspended: number;
  attempts: number;
  mail_from: string;
  rcpt_to: string;
  subject: string | null;
  message_id_header: string | null;
  size_bytes: number;
  created_at: number;
  updated_at: number;
  next_attempt_at: number;
  deferred_at: number | null;
  deferred_reason: string | null;
  sent_at: number | null;
  error_at: number | null;
  error: string | null;
  last_reply_code: number | null;
  last_enhanced_status: string | null;
  refused_recipients: string | null;
  reported_at: number | null;
  bounce_type: string | null;
  bounce_code: string | null;
  bounce_reason: string | null;
  bounce_at: number | null;
  bounce_reported_at: number | null;
  pec_rda_at: number | null;
  pec_rdc_at: number | null;
  pec_error: string | null;
  pec_error_at: number | null;
  complained_at: number | null;
  complaint_type: string | null;
  provider_message_id: string | null;
  provider_state: string | null;
  provider_state_at: number | null;
}

export interface EventRow {
  event_type: string;
  occurred_at: number;
  attempt: number;
  reply_code: number | null;
  enhanced_status: string | null;
  text: string | null;
  data: string | null;
}

export function toDetail(row: DetailRow): MessageDetail {
  const waiting = row.state === 'queued' || row.state === 'deferred';
  return {
    pk: row.pk,
    id: row.id,
    tenant_id: row.tenant_id,
    account_id: row.account_id,
    priority: row.priority,
    batch_code: row.batch_code,
    source: row.source,
    state: row.state,
    suspended: row.suspended === 1,
    attempts: row.attempts,
    mail_from: row.mail_from,
    rcpt_to: JSON.parse(row.rcpt_to) as string[],
    subject: row.subject,
    message_id: row.message_id_header,
    size_bytes: row.size_bytes,
    created_ts: epochSeconds(row.created_at) ?? 0,
    updated_ts: epochSeconds(row.updated_at) ?? 0,
    next_attempt_ts: waiting ? epochSeconds(row.next_attempt_at) : null,
    deferred_ts: epochSeconds(row.deferred_at),
    deferred_reason: row.deferred_reason,
    sent_ts: epochSeconds(row.sent_at),
    error_ts: epochSeconds(row.error_at),
    error: row.error,
    last_reply_code: row.last_reply_code,
    last_enhanced_status: row.last_enhanced_status,
    refused_recipients: row.refused_recipients === null ? null : (JSON.parse(row.refused_recipients) as unknown[]),
    reported_ts: epochSeconds(row.reported_at),
    bounce_type: row.bounce_type,
    bounce_code: row.bounce_code,
    bounce_reason: row.bounce_reason,
    bounce_ts: epochSeconds(row.bounce_at),
    bounce_reported_ts: epochSeconds(row.bounce_reported_at),
    complaint_ts: epochSeconds(row.complained_at),
    complaint_type: row.complaint_type,
    provider_message_id: row.provider_message_id,
    provider_state: row.provider_state,
    provider_state_ts: epochSeconds(row.provider_state_at),
    pec_rda_ts: epochSeconds(row.pec_rda_at),
    pec_rdc_ts: epochSeconds(row.pec_rdc_at),
    pec_error: row.pec_error,
    pec_error_ts: epochSeconds(row.pec_error_at),
  };
}

export function toEventView(row: EventRow): MessageEventView {
  return {
    event_type: row.event_type.startsWith(MESSAGE_EVENT_PREFIX) ? row.event_type.slice(MESSAGE_EVENT_PREFIX.length) : row.event_type,
    ts: epochSeconds(row.occurred_at) ?? 0,
    attempt: row.attempt,
    reply_code: row.reply_code,
    enhanced_status: row.enhanced_status,
    text: row.text,
    data: row.data === null ? null : (JSON.parse(row.data) as Record<string, unknown>),
  };
}
