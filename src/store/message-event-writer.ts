/**
 * Writes one message transition, inside the caller's transaction, as one outbox
 * row: the mirror publishes it and the message's timeline reads it back. Its text
 * and the diagnostic texts of its data are kept with every address redacted
 * (core/address-redaction.ts): whoever writes an event, no relay's words keep a person;
 * the fields of its data that name one are sealed under its message's key (event-fields.ts).
 */
import { redactDiagnostics, redactedText, type IdSource } from '../core/index.js';
import type { BodySeal } from '../core/message/index.js';
import type { SqliteDatabase } from './database.js';
import { eventFieldSealer } from './event-fields.js';

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

/** The columns a transition names its message by: select or return them, then `transitionOf`. */
export const IDENTITY_COLUMNS = 'pk, tenant_id, id, account_id, batch_code, attempts';

export interface IdentityRow {
  pk: number;
  tenant_id: string;
  id: string;
  account_id: string;
  batch_code: string | null;
  attempts: number;
}

/** A transition of the message `row` identifies, at its current attempt. */
export const transitionOf = (
  row: IdentityRow,
  type: string,
  at: number,
  more: Partial<MessageTransition> = {},
): MessageTransition => ({
  pk: row.pk,
  tenantId: row.tenant_id,
  id: row.id,
  accountId: row.account_id,
  batchCode: row.batch_code,
  type,
  at,
  attempt: row.attempts,
  ...more,
});

export const MESSAGE_EVENT_PREFIX = 'message.';

/**
 * Told of each outbox row as it is written (`eventType` in full, `message.sent`),
 * inside its transaction: a listener must only take note. The report loop
 * schedules a round; by the time that round reads, the transaction has
 * committed or rolled back.
 */
export type OutboxListener = (
  tenantId: string,
  eventType: string,
  accountId?: string | null,
  text?: string | null,
  messagePk?: number | null,
) => void;

export function createMessageEventWriter(
  db: SqliteDatabase,
  ids: IdSource,
  seal: BodySeal,
  listener: OutboxListener = () => {},
): MessageEventWriter {
  const sealNaming = eventFieldSealer(db, seal);
  const insert =
    db.prepare(`INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, tenant_id, message_pk, message_id,
      account_id, batch_code, attempt, reply_code, enhanced_status, text, payload, occurred_at, correlation_id)
    VALUES (?, 'message', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);

  return (t) => {
    const text = redactedText(t.text);
    const id = ids.uuid();
    insert.run(
      id,
      `${t.tenantId}/${t.id}`,
      MESSAGE_EVENT_PREFIX + t.type,
      t.tenantId,
      t.pk,
      t.id,
      t.accountId,
      t.batchCode,
      t.attempt,
      t.replyCode ?? null,
      t.enhancedStatus ?? null,
      text,
      t.data === undefined ? null : JSON.stringify(sealNaming(t.pk, t.tenantId, id, redactDiagnostics(t.data))),
      t.at,
      t.correlationId ?? null,
    );
    listener(t.tenantId, MESSAGE_EVENT_PREFIX + t.type, t.accountId, text, t.pk);
  };
}
