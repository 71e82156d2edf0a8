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
 * Fields of an event's data that name a person or may quote one (a relay's or a bounce's words):
 * they stay in the database, where erasure reaches them, and are left out of the published events
 * (issue 45). An event on the stream carries ids, states and codes. An address's keyed digest
 * (`address_digest`, a suppression's name) is one too: it tells the same person's entries apart
 * from others', and erasure must be able to clear it.
 */
export const PERSONAL_EVENT_FIELDS = [
  'recipient',
  'recipients',
  'address',
  'address_digest',
  'refused',
  'refused_recipients',
  'reason',
  'bounce_reason',
  'error',
  'error_detail',
  'text',
  'from',
  'to',
  'subject',
  // The fields above that name a person, sealed under the message's key (store/event-fields.ts).
  'sealed',
] as const;

/** Version 2: personal fields and texts left out of `data` (version 1 carried them). */
export const PUBLISHED_EVENT_VERSION = 2;

/**
 * The published body: the contract's fields, with the relay's reply codes folded into `data` and
 * its personal fields left out. This is the reference: the mirror has SQLite encode the same bytes
 * as it reads a window (store/mirror-store.ts), and test/store/event-body.test.ts holds the two together.
 */
export function eventBody(row: OutboxRow): string {
  const data: Record<string, unknown> =
    row.payload === null ? {} : (JSON.parse(row.payload) as Record<string, unknown>);
  for (const field of PERSONAL_EVENT_FIELDS) delete data[field];
  if (row.replyCode !== null) data.reply_code = row.replyCode;
  if (row.enhancedStatus !== null) data.enhanced_status = row.enhancedStatus;
  return JSON.stringify({
    event_id: row.id,
    event_type: row.eventType,
    event_version: Math.max(row.eventVersion, PUBLISHED_EVENT_VERSION),
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
