/** SQL predicates over the outbox that several store modules must spell the same way. */
import { REPORTABLE_EVENTS } from '../core/report/index.js';
import { MESSAGE_EVENT_PREFIX } from './message-event-writer.js';

/** Spelled exactly as the predicate of the outbox_reportable index, so that SQLite uses it. */
export const REPORTABLE_SQL = `event_type IN (${REPORTABLE_EVENTS.map((type) => `'${MESSAGE_EVENT_PREFIX}${type}'`).join(', ')})`;

/**
 * Rows (of outbox `o`) whose message is gone and that no report still needs:
 * what neither the message's timeline nor the report loop will read again.
 */
export const ORPHANED_SQL = `o.message_pk IS NOT NULL AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.pk = o.message_pk)
  AND NOT (o.${REPORTABLE_SQL} AND o.seq > coalesce((SELECT cursor_seq FROM report_state r WHERE r.tenant_id = o.tenant_id), 9223372036854775807))`;
