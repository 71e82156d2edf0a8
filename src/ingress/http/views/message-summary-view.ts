/** A message in a GET /messages page: the core's summary (core/message/search.ts) in the API's snake_case and epoch seconds. */
import { epochSeconds } from '../../../core/index.js';
import type { HandoffState, Priority, MessageStatus, MessageSummary } from '../../../core/message/index.js';

export interface MessageSummaryView {
  pk: number;
  id: string;
  tenant_id: string;
  account_id: string;
  status: MessageStatus;
  state: HandoffState;
  priority: Priority;
  batch_code: string | null;
  subject: string | null;
  mail_from: string;
  rcpt_to: string[];
  attempts: number;
  created_ts: number;
  next_attempt_ts: number | null;
  sent_ts: number | null;
  error_ts: number | null;
  error: string | null;
  bounce_type: string | null;
  /** Fleet mode: the node that holds it. */
  node_id?: string | undefined;
}

// Field order as the API has always answered it; `node_id` last, where a fleet page adds it.
export function viewMessageSummary(m: MessageSummary & { nodeId?: string }): MessageSummaryView {
  const view: MessageSummaryView = {
    pk: m.pk,
    id: m.clientId,
    tenant_id: m.tenantId,
    account_id: m.accountId,
    status: m.status,
    state: m.state,
    priority: m.priority,
    batch_code: m.batchCode,
    subject: m.subject,
    mail_from: m.mailFrom,
    rcpt_to: m.rcptTo,
    attempts: m.attempts,
    created_ts: epochSeconds(m.createdAt) ?? 0,
    next_attempt_ts: epochSeconds(m.nextAttemptAt),
    sent_ts: epochSeconds(m.sentAt),
    error_ts: epochSeconds(m.errorAt),
    error: m.error,
    bounce_type: m.bounceType,
  };
  return m.nodeId === undefined ? view : { ...view, node_id: m.nodeId };
}
