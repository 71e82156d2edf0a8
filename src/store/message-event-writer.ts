/**
 * Writes one message transition twice, inside the caller's transaction: into
 * the message's timeline (message_events) and into the outbox for the mirror.
 */
import type { IdSource } from '../core/clock.js';
import type { SqliteDatabase } from './database.js';

export interface MessageTransition {
  pk: number;
  tenantId: string;
  id: string;
  accountId: string;
  batchCode: string | null;
  /** Timeline name (`sent`); the outbox event type is `message.<type>`. */
  type: string;
  at: number;
  attempt: number;
  replyCode?: number | null;
  enhancedStatus?: string | null;
  text?: string | null;
  data?: Record<string, unknown>;
  correlationId?: string | null;
}

export type MessageEventWriter = (transition: MessageTransition) => void;

export function createMessageEventWriter(db: SqliteDatabase, ids: IdSource): MessageEventWriter {
  const timeline = db.prepare(`INSERT INTO message_events (message_pk, event_type, occurred_at, attempt, reply_code, enhanced_status, text, data)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?)`);
  const outbox = db.prepare(`INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, event_version, tenant_id,
      message_pk, message_id, account_id, batch_code, attempt, payload, occurred_at, correlation_id)
    VALUES (?, 'message', ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);

  return (t) => {
    const data = t.data === undefined ? null : JSON.stringify(t.data);
    timeline.run(t.pk, t.type, t.at, t.attempt, t.replyCode ?? null, t.enhancedStatus ?? null, t.text ?? null, data);
    const payload = JSON.stringify({
      state: t.type,
      reply_code: t.replyCode ?? null,
      enhanced_status: t.enhancedStatus ?? null,
      text: t.text ?? null,
      ...t.data,
    });
    outbox.run(ids.uuid(), `${t.tenantId}/${t.id}`, `message.${t.type}`, t.tenantId, t.pk, t.id, t.accountId, t.batchCode, t.attempt, payload, t.at, t.correlationId ?? null);
  };
}
