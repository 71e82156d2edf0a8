/**
 * SQLite side of what happens to a message after the relay took it: a bounce
 * sets its bounce fields, a complaint its complaint fields, each with its
 * event (reported to the client, mirrored to the stream) in the caller's
 * transaction or one of its own. The bounce's reason is kept with its addresses
 * redacted (core/address-redaction.ts), in the message as in the event.
 */
import { redactedText } from '../core/index.js';
import type { BounceRecord, BounceStore, ComplaintRecord } from '../core/bounce/index.js';
import { transactionRunner, type SqliteDatabase } from './database.js';
import { IDENTITY_COLUMNS, transitionOf, type IdentityRow, type MessageEventWriter } from './message-event-writer.js';

export interface MessageBounceWriter {
  /**
   * Inside the caller's transaction; false when the message is gone or erased (a bounce must not
   * bring back what an erasure took), or a soft bounce met a hard one.
   */
  bounce(bounce: BounceRecord): boolean;
  complaint(complaint: ComplaintRecord): boolean;
}

export function createMessageBounceWriter(db: SqliteDatabase, writeEvent: MessageEventWriter): MessageBounceWriter {
  // bounce_reported_at is cleared: a later bounce of the same message is news to the client.
  // A soft bounce (a delay notice) arriving after a hard one does not undo it.
  const bounce = db.prepare<Record<string, unknown>, IdentityRow>(`UPDATE messages
    SET bounce_type = @type, bounce_code = @code, bounce_reason = @reason, bounce_at = @at, bounce_reported_at = NULL, updated_at = @at
    WHERE tenant_id = @tenant AND id = @id AND erased_at IS NULL AND NOT (@type = 'soft' AND bounce_type IS 'hard')
    RETURNING ${IDENTITY_COLUMNS}`);
  const complaint = db.prepare<Record<string, unknown>, IdentityRow>(`UPDATE messages
    SET complained_at = @at, complaint_type = @type, updated_at = @at
    WHERE tenant_id = @tenant AND id = @id AND erased_at IS NULL RETURNING ${IDENTITY_COLUMNS}`);
  return {
    bounce(record) {
      const row = bounce.get({
        tenant: record.tenantId,
        id: record.clientId,
        type: record.type,
        code: record.code,
        reason: redactedText(record.reason),
        at: record.at,
      });
      if (row === undefined) return false;
      writeEvent(
        transitionOf(row, 'bounced', record.at, {
          text: record.reason,
          enhancedStatus: typeof record.details?.enhanced_status === 'string' ? record.details.enhanced_status : null,
          data: {
            bounce_type: record.type,
            bounce_code: record.code,
            bounce_reason: record.reason,
            recipient: record.recipient,
            ...record.details,
          },
        }),
      );
      return true;
    },
    complaint(record) {
      const row = complaint.get({
        tenant: record.tenantId,
        id: record.clientId,
        type: record.feedbackType,
        at: record.at,
      });
      if (row === undefined) return false;
      writeEvent(
        transitionOf(row, 'complained', record.at, {
          text: `complaint: ${record.feedbackType ?? 'unspecified'}`,
          data: { feedback_type: record.feedbackType, recipient: record.recipient, ...record.details },
        }),
      );
      return true;
    },
  };
}

export function createSqliteBounceStore(db: SqliteDatabase, writeEvent: MessageEventWriter): BounceStore {
  const inTransaction = transactionRunner(db);
  const writer = createMessageBounceWriter(db, writeEvent);
  return { record: (bounce) => inTransaction(() => writer.bounce(bounce), 'immediate') };
}
