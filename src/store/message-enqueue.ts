/**
 * Commits a request's valid messages in one transaction: new client ids are
 * inserted, waiting ones replaced (idempotent resubmission). A message enters
 * suspended when its batch or tenant is suspended or the tenant is inactive.
 */
import type { NewMessage } from '../core/message.js';
import type { EnqueueResult } from '../core/queue.js';
import { durableTransaction, type SqliteDatabase } from './database.js';
import type { MessageEventWriter } from './message-event-writer.js';

export function createEnqueue(db: SqliteDatabase, writeEvent: MessageEventWriter) {
  const holds = db.prepare<[string, string], { inactive: number; batches: string | null }>(`SELECT
      (SELECT active = 0 FROM tenants WHERE id = ?) AS inactive,
      (SELECT json_group_array(batch_code) FROM suspensions WHERE tenant_id = ?) AS batches`);
  // A new id (the common case) costs one statement: no lookup first, and no
  // RETURNING (it cost a third of the insert, measured); lastInsertRowid is free.
  const insert = db.prepare(`INSERT INTO messages (tenant_id, id, account_id, priority, batch_code, source,
      payload, mail_from, rcpt_to, subject, message_id_header, size_bytes, state, suspended, next_attempt_at, deferred_at, created_at, updated_at)
    VALUES (@tenant_id, @id, @account_id, @priority, @batch_code, 'http', @payload, @mail_from, @rcpt_to, @subject,
      @message_id_header, @size_bytes, @state, @suspended, @next_attempt_at, @deferred_at, @now, @now)
    ON CONFLICT (tenant_id, id) DO NOTHING`);
  const replace = db.prepare<Record<string, unknown>, { pk: number }>(`UPDATE messages SET account_id = @account_id, priority = @priority, batch_code = @batch_code,
      payload = @payload, mail_from = @mail_from, rcpt_to = @rcpt_to, subject = @subject, message_id_header = @message_id_header,
      size_bytes = @size_bytes, state = @state, suspended = @suspended, next_attempt_at = @next_attempt_at,
      deferred_at = @deferred_at, deferred_reason = NULL, updated_at = @now
    WHERE tenant_id = @tenant_id AND id = @id AND state IN ('queued', 'deferred') RETURNING pk`);

  const enqueue = db.transaction((messages: readonly NewMessage[], now: number, correlationId: string | null): EnqueueResult => {
    const result = { inserted: 0, updated: 0 };
    const suspensionCache = new Map<string, (batch: string | null) => boolean>();
    const isSuspended = (tenantId: string, batch: string | null): boolean => {
      let check = suspensionCache.get(tenantId);
      if (check === undefined) {
        const row = holds.get(tenantId, tenantId);
        const batches = new Set(JSON.parse(row?.batches ?? '[]') as string[]);
        const whole = row?.inactive === 1 || batches.has('*');
        check = (code) => whole || (code !== null && batches.has(code));
        suspensionCache.set(tenantId, check);
      }
      return check(batch);
    };

    for (const message of messages) {
      const deferred = message.deferredUntil !== null && message.deferredUntil > now;
      const params = {
        tenant_id: message.tenantId,
        id: message.id,
        account_id: message.accountId,
        priority: message.priority,
        batch_code: message.batchCode,
        payload: JSON.stringify(message.payload),
        mail_from: message.mailFrom,
        rcpt_to: JSON.stringify(message.rcptTo),
        subject: message.payload.subject,
        message_id_header: message.payload.messageId,
        size_bytes: message.sizeBytes,
        state: deferred ? 'deferred' : 'queued',
        suspended: isSuspended(message.tenantId, message.batchCode) ? 1 : 0,
        next_attempt_at: deferred ? (message.deferredUntil ?? now) : now,
        deferred_at: deferred ? message.deferredUntil : null,
        now,
      };
      const inserted = insert.run(params);
      const isNew = inserted.changes === 1;
      let pk: number;
      if (isNew) {
        pk = Number(inserted.lastInsertRowid);
        result.inserted += 1;
      } else {
        // Core checked the state inside this same transaction; a row that moved on is a bug.
        const replaced = replace.get(params);
        if (replaced === undefined) throw new Error(`message ${message.id} is no longer waiting`);
        pk = replaced.pk;
        result.updated += 1;
      }
      writeEvent({
        pk, tenantId: message.tenantId, id: message.id, accountId: message.accountId, batchCode: message.batchCode,
        type: isNew ? 'queued' : 'updated', at: now, attempt: 0, correlationId,
        data: { priority: message.priority, ...(deferred ? { deferred_ts: Math.floor((message.deferredUntil ?? now) / 1000) } : {}), ...(params.suspended ? { suspended: true } : {}) },
      });
    }
    return result;
  });

  return (messages: readonly NewMessage[], now: number, correlationId: string | null): EnqueueResult =>
    durableTransaction(db, () => enqueue(messages, now, correlationId));
}
