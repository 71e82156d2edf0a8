/** SQLite accounts: reads, saves and deletes; the rows and their sealed secrets are account-rows.ts's. */
import { pecMailbox } from '../core/account/index.js';
import type { AccountRepository, SecretBox } from '../core/index.js';
import type { SqliteDatabase } from './database.js';
import { ACCOUNT_COLUMNS as COLUMNS, createAccountRowMapper, type AccountRow } from './account-rows.js';
import { PENDING_STATES_SQL } from './tenant-repository.js';

export function createSqliteAccountRepository(db: SqliteDatabase, secrets: SecretBox): AccountRepository {
  const { toAccount, toRow } = createAccountRowMapper(secrets);
  const byId = db.prepare<[string, string], AccountRow>(
    `SELECT ${COLUMNS} FROM accounts WHERE tenant_id = ? AND id = ?`,
  );
  const byTenant = db.prepare<[string], AccountRow>(`SELECT ${COLUMNS} FROM accounts WHERE tenant_id = ? ORDER BY id`);
  const choices = db.prepare<[string], { id: string; is_default: number }>(
    `SELECT id, is_default FROM accounts WHERE tenant_id = ? ORDER BY id`,
  );
  const all = db.prepare<[], AccountRow>(`SELECT ${COLUMNS} FROM accounts ORDER BY tenant_id, id`);
  const pec = db.prepare<[], AccountRow>(
    `SELECT ${COLUMNS} FROM accounts WHERE is_pec = 1 AND imap_host IS NOT NULL ORDER BY tenant_id, id`,
  );
  const version = db.prepare<[], { n: number; u: number; p: number }>(
    `SELECT count(*) AS n, total(updated_at) AS u, total(paused_at) AS p FROM accounts`,
  );
  const clearDefault = db.prepare(
    `UPDATE accounts SET is_default = 0 WHERE tenant_id = ? AND id <> ? AND is_default = 1`,
  );
  const upsert = db.prepare(`INSERT INTO accounts (${COLUMNS}) VALUES (@tenant_id, @id, @host, @port, @user,
      @password_sealed, @tls_mode, @tls_reject_unauthorized, @limit_per_minute, @limit_per_hour, @limit_per_day,
      @limit_behavior, @limit_failover, @fallback_accounts, @failover_after_seconds, @warmup, @destination_limits, @max_connections, @max_messages_per_connection, @is_default, @is_pec, @imap_host, @imap_port,
      @imap_tls_mode, @imap_user, @imap_password_sealed, @imap_folder, @provider, @provider_webhook_sealed, @paused_at, @paused_reason, @created_at, @updated_at)
    ON CONFLICT (tenant_id, id) DO UPDATE SET host = excluded.host, port = excluded.port, user = excluded.user,
      password_sealed = excluded.password_sealed, tls_mode = excluded.tls_mode,
      tls_reject_unauthorized = excluded.tls_reject_unauthorized, limit_per_minute = excluded.limit_per_minute,
      limit_per_hour = excluded.limit_per_hour, limit_per_day = excluded.limit_per_day,
      limit_behavior = excluded.limit_behavior, limit_failover = excluded.limit_failover,
      fallback_accounts = excluded.fallback_accounts, failover_after_seconds = excluded.failover_after_seconds,
      warmup = excluded.warmup, destination_limits = excluded.destination_limits,
      max_connections = excluded.max_connections,
      max_messages_per_connection = excluded.max_messages_per_connection, is_default = excluded.is_default,
      is_pec = excluded.is_pec, imap_host = excluded.imap_host, imap_port = excluded.imap_port,
      imap_tls_mode = excluded.imap_tls_mode, imap_user = excluded.imap_user,
      imap_password_sealed = excluded.imap_password_sealed, imap_folder = excluded.imap_folder,
      provider = excluded.provider, provider_webhook_sealed = excluded.provider_webhook_sealed,
      paused_at = excluded.paused_at, paused_reason = excluded.paused_reason, updated_at = excluded.updated_at`);
  // History (sent, error) stays; only mail that would otherwise wait forever goes.
  const removeMessages = db.prepare(
    `DELETE FROM messages WHERE tenant_id = ? AND account_id = ? AND state IN ${PENDING_STATES_SQL}`,
  );
  const remove = db.prepare(`DELETE FROM accounts WHERE tenant_id = ? AND id = ?`);
  const pending = db.prepare<[string, string], { n: number }>(
    `SELECT count(*) AS n FROM messages WHERE tenant_id = ? AND account_id = ? AND state IN ${PENDING_STATES_SQL}`,
  );

  // Saves through this repository, counted: the version changes on every save even when
  // two fall in the same millisecond (same updated_at) or change only the mailbox.
  let writes = 0;

  return {
    get: (tenantId, id) => {
      const row = byId.get(tenantId, id);
      return row === undefined ? null : toAccount(row);
    },
    list: (tenantId) => (tenantId === null ? all.all() : byTenant.all(tenantId)).map(toAccount),
    choices: (tenantId) => choices.all(tenantId).map((row) => ({ id: row.id, isDefault: row.is_default === 1 })),
    version: () => {
      const row = version.get();
      return row === undefined ? '' : `${row.n}:${row.u}:${row.p}:${writes}`;
    },
    pecMailboxes: () =>
      pec
        .all()
        .map(toAccount)
        .flatMap((account) => pecMailbox(account) ?? []),
    save: (account) => {
      if (account.isDefault) clearDefault.run(account.tenantId, account.id);
      upsert.run(toRow(account));
      writes += 1;
    },
    delete: (tenantId, id) => {
      removeMessages.run(tenantId, id);
      remove.run(tenantId, id);
      writes += 1;
    },
    countPendingMessages: (tenantId, id) => pending.get(tenantId, id)?.n ?? 0,
  };
}
