/** SQLite side of bounces: the message's bounce fields and its `bounced` event, in one transaction. */
import type { BounceStore } from '../core/bounce.js';
import { transactionRunner, type SqliteDatabase } from './database.js';
import { IDENTITY_COLUMNS, transitionOf, type IdentityRow, type MessageEventWriter } from './message-event-writer.js';

export function createSqliteBounceStore(db: SqliteDatabase, writeEvent: MessageEventWriter): BounceStore {
  const inTransaction = transactionRunner(db);
  // bounce_reported_at is cleared: a later bounce of the same message is news to the client.
  const update = db.prepare<Record<string, unknown>, IdentityRow>(`UPDATE messages
    SET bounce_type = @type, bounce_code = @code, bounce_reason = @reason, bounce_at = @at, bounce_reported_at = NULL, updated_at = @at
    WHERE tenant_id = @tenant AND id = @id RETURNING ${IDENTITY_COLUMNS}`);
  return {
    record: (bounce) =>
      inTransaction(() => {
        const row = update.get({ tenant: bounce.tenantId, id: bounce.messageId, type: bounce.type, code: bounce.code, reason: bounce.reason, at: bounce.at });
        if (row === undefined) return false;
        writeEvent(transitionOf(row, 'bounced', bounce.at, {
          text: bounce.reason,
          data: { bounce_type: bounce.type, bounce_code: bounce.code, bounce_reason: bounce.reason, recipient: bounce.recipient },
        }));
        return true;
      }, 'immediate'),
  };
}
