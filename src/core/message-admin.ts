/** Port of the operator commands on messages, and the read model of one message. */
import type { HandoffState, Priority } from './message.js';
import type { PecReceiptView } from './pec.js';

export interface MessageEventView {
  event_type: string;
  ts: number;
  attempt: number;
  reply_code: number | null;
  enhanced_status: string | null;
  text: string | null;
  data: Record<string, unknown> | null;
}

export interface MessageDetail {
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
  /** A recipient's complaint (ARF feedback report) about it. */
  complaint_ts: number | null;
  complaint_type: string | null;
  /** The provider's side (issue 27): its id of the message from the relay's 250 reply, and what its webhooks said last. */
  provider_message_id: string | null;
  provider_state: string | null;
  provider_state_ts: number | null;
  pec_rda_ts: number | null;
  pec_rdc_ts: number | null;
  pec_error: string | null;
  pec_error_ts: number | null;
}

export interface IdsOutcome {
  done: string[];
  notFound: string[];
  /** Ids whose state does not allow the command (in flight, still waiting, ...). */
  skipped: string[];
}

export interface MessageAdmin {
  /** Adds the suspension and holds the matching waiting messages; answers how many. */
  suspend(tenantId: string, batchCode: string, at: number): number;
  /** Removes the suspension ('*' removes every suspension of the tenant); answers how many were released. */
  activate(tenantId: string, batchCode: string, at: number): number;
  /** Re-derives the hold of a tenant's waiting messages (after `active` changed). */
  refreshHolds(tenantId: string, at: number): void;
  suspensions(tenantId: string): string[];
  deleteMessages(tenantId: string, ids: readonly string[], at: number): IdsOutcome;
  resend(tenantId: string, ids: readonly string[], at: number, correlationId: string | null): IdsOutcome;
  /**
   * Makes the next attempt of waiting messages `at` (a retry backoff or a scheduled time cut short);
   * skipped: a message that is not waiting for a later attempt (sent, failed, in flight, held, already due).
   */
  retryNow(tenantId: string, ids: readonly string[], at: number, correlationId: string | null): IdsOutcome;
  /** Deletes messages reported before `before` (and whose bounce, if any, was reported too). */
  removeReported(tenantId: string | null, before: number): number;
  /** The message, its timeline and its PEC receipts (in the order they arrived). */
  detail(tenantId: string, id: string): { message: MessageDetail; events: MessageEventView[]; pecReceipts: PecReceiptView[] } | null;
}
