/**
 * An event on the JetStream mirror (ARCHITECTURE.md §4.6): its subject and its JSON
 * body. Subscribers implement these names; the `data` of admin events carries the
 * account and tenant contracts (account.ts, tenant.ts) as they were written.
 */
import type { OutboxRow } from '../events/mirror.js';

/** `<prefix>.events.<tenant_id>.<event_type>`: tenant ids are subject-safe tokens by construction (core/identifiers.ts). */
export const eventSubject = (prefix: string, row: Pick<OutboxRow, 'tenantId' | 'eventType'>): string =>
  `${prefix}.events.${row.tenantId}.${row.eventType}`;

/**
 * The published body: the contract's fields, with the relay's reply folded into `data`. This is
 * the reference: the mirror has SQLite encode the same bytes as it reads a window
 * (store/mirror-store.ts), and test/store/event-body.test.ts holds the two together.
 */
export function eventBody(row: OutboxRow): string {
  const data: Record<string, unknown> =
    row.payload === null ? {} : (JSON.parse(row.payload) as Record<string, unknown>);
  if (row.replyCode !== null) data.reply_code = row.replyCode;
  if (row.enhancedStatus !== null) data.enhanced_status = row.enhancedStatus;
  if (row.text !== null) data.text = row.text;
  return JSON.stringify({
    event_id: row.id,
    event_type: row.eventType,
    event_version: row.eventVersion,
    occurred_at: new Date(row.occurredAt).toISOString(),
    tenant_id: row.tenantId,
    message_id: row.messageId,
    message_pk: row.messagePk,
    account_id: row.accountId,
    batch_code: row.batchCode,
    attempt: row.attempt,
    correlation_id: row.correlationId,
    data,
  });
}
