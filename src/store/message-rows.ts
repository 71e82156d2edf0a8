/** Message rows -> the read model: columns in the core's names, instants kept in epoch ms. */
import type {
  MessageDetail,
  MessageTimelineEvent,
  HandoffState,
  PersonalFields,
  Priority,
} from '../core/message/index.js';
import type { eventFieldOpener } from './event-fields.js';
import type { PersonalRow } from './personal-fields.js';
import { MESSAGE_EVENT_PREFIX } from './message-event-writer.js';

export interface DetailRow extends PersonalRow {
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
  message_id_header: string | null;
  size_bytes: number;
  created_at: number;
  updated_at: number;
  next_attempt_at: number;
  deferred_at: number | null;
  deferred_reason: string | null;
  held_for: string | null;
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
  body_shredded_at: number | null;
  erased_at: number | null;
  complained_at: number | null;
  complaint_type: string | null;
  provider_message_id: string | null;
  provider_state: string | null;
  provider_state_at: number | null;
}

export interface EventRow {
  id: string;
  tenant_id: string;
  personal_key: Buffer | null;
  event_type: string;
  occurred_at: number;
  attempt: number;
  reply_code: number | null;
  enhanced_status: string | null;
  text: string | null;
  data: string | null;
}

export function toDetail(row: DetailRow, personal: PersonalFields, refused: unknown[] | null): MessageDetail {
  const waiting = row.state === 'queued' || row.state === 'deferred';
  return {
    pk: row.pk,
    clientId: row.id,
    tenantId: row.tenant_id,
    accountId: row.account_id,
    priority: row.priority,
    batchCode: row.batch_code,
    source: row.source,
    state: row.state,
    suspended: row.suspended === 1,
    attempts: row.attempts,
    mailFrom: personal.mailFrom,
    rcptTo: personal.rcptTo,
    subject: personal.subject,
    messageId: row.message_id_header,
    sizeBytes: row.size_bytes,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    nextAttemptAt: waiting ? row.next_attempt_at : null,
    deferredAt: row.deferred_at,
    deferredReason: row.deferred_reason,
    heldFor: waiting ? row.held_for : null,
    sentAt: row.sent_at,
    errorAt: row.error_at,
    error: row.error,
    lastReplyCode: row.last_reply_code,
    lastEnhancedStatus: row.last_enhanced_status,
    refusedRecipients: refused,
    reportedAt: row.reported_at,
    bounceType: row.bounce_type,
    bounceCode: row.bounce_code,
    bounceReason: row.bounce_reason,
    bounceAt: row.bounce_at,
    bounceReportedAt: row.bounce_reported_at,
    complaintAt: row.complained_at,
    complaintType: row.complaint_type,
    providerMessageId: row.provider_message_id,
    providerState: row.provider_state,
    providerStateAt: row.provider_state_at,
    pecRdaAt: row.pec_rda_at,
    pecRdcAt: row.pec_rdc_at,
    pecError: row.pec_error,
    pecErrorAt: row.pec_error_at,
    bodyShreddedAt: row.body_shredded_at,
    erasedAt: row.erased_at,
  };
}

export function toTimelineEvent(row: EventRow, open: ReturnType<typeof eventFieldOpener>): MessageTimelineEvent {
  return {
    type: row.event_type.startsWith(MESSAGE_EVENT_PREFIX)
      ? row.event_type.slice(MESSAGE_EVENT_PREFIX.length)
      : row.event_type,
    at: row.occurred_at,
    attempt: row.attempt,
    replyCode: row.reply_code,
    enhancedStatus: row.enhanced_status,
    text: row.text,
    data: open({
      tenantId: row.tenant_id,
      eventId: row.id,
      data: row.data === null ? null : (JSON.parse(row.data) as Record<string, unknown>),
      key: row.personal_key,
    }),
  };
}
