/** SQLite side of the queue overview: waiting messages only, read from the pending index alone. */
import type { QueueCount, QueueStatusStore } from '../core/message/index.js';
import type { SqliteDatabase } from './database.js';

export function createSqliteQueueStatus(db: SqliteDatabase): QueueStatusStore {
  // `state IN ('queued', 'deferred', 'sending')` is messages_pending's own predicate, and the index
  // holds every column read here (migration 10): it is read alone, no message row is.
  const counts = db.prepare<Record<string, unknown>, QueueCount>(`
    SELECT tenant_id AS tenantId, account_id AS accountId, CASE WHEN suspended = 1 AND state <> 'sending' THEN 'suspended' ELSE state END AS status, priority, count(*) AS count
    FROM messages WHERE state IN ('queued', 'deferred', 'sending') AND (@tenant IS NULL OR tenant_id = @tenant)
    GROUP BY tenant_id, account_id, status, priority`);
  // Per account only (the accounts list): the index's leading keys, in its order.
  const byAccount = db.prepare<Record<string, unknown>, Pick<QueueCount, 'tenantId' | 'accountId' | 'count'>>(`
    SELECT tenant_id AS tenantId, account_id AS accountId, count(*) AS count FROM messages
    WHERE state IN ('queued', 'deferred', 'sending') AND (@tenant IS NULL OR tenant_id = @tenant)
    GROUP BY tenant_id, account_id`);
  const oldest = db.prepare<
    Record<string, unknown>,
    { tenant_id: string; id: string; account_id: string; next_attempt_at: number }
  >(`
    SELECT tenant_id, id, account_id, next_attempt_at FROM messages
    WHERE state IN ('queued', 'deferred') AND suspended = 0 AND next_attempt_at <= @now AND (@tenant IS NULL OR tenant_id = @tenant)
    ORDER BY next_attempt_at, pk LIMIT 1`);
  // count(paused_at) counts the paused ones; every tenant with an account gets a row, 0 included.
  const paused = db.prepare<[], { tenantId: string; paused: number }>(
    `SELECT tenant_id AS tenantId, count(paused_at) AS paused FROM accounts GROUP BY tenant_id`,
  );
  return {
    pausedAccounts: () => paused.all(),
    counts: (tenantId) => counts.all({ tenant: tenantId }),
    waitingByAccount: (tenantId) => byAccount.all({ tenant: tenantId }),
    oldestDue: (tenantId, now) => {
      const row = oldest.get({ tenant: tenantId, now });
      return row === undefined
        ? null
        : { tenantId: row.tenant_id, clientId: row.id, accountId: row.account_id, dueAt: row.next_attempt_at };
    },
  };
}
