/** SQLite side of the tenants' suppression lists. */
import type { SuppressionRecord, SuppressionSource } from '../core/bounce/index.js';
import type { SuppressionRepository } from '../core/tenant/index.js';
import type { SqliteDatabase } from './database.js';

interface SuppressionRow {
  tenant_id: string;
  address: string;
  reason: string | null;
  source: SuppressionSource;
  created_at: number;
  expires_at: number | null;
}

const toRecord = (row: SuppressionRow): SuppressionRecord => ({
  tenantId: row.tenant_id,
  address: row.address,
  reason: row.reason,
  source: row.source,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
});

const COLUMNS = 'tenant_id, address, reason, source, created_at, expires_at';
const LIVE = '(expires_at IS NULL OR expires_at > @now)';

export function createSqliteSuppressionRepository(db: SqliteDatabase): SuppressionRepository {
  // The primary key (tenant_id, address) serves the page seek and the prefix range.
  const list = db.prepare<Record<string, unknown>, SuppressionRow>(`SELECT ${COLUMNS} FROM suppressions
    WHERE tenant_id = @tenant AND address > @after AND address >= @prefix AND address < @prefixEnd AND ${LIVE}
    ORDER BY address LIMIT @limit`);
  const get = db.prepare<Record<string, unknown>, SuppressionRow>(
    `SELECT ${COLUMNS} FROM suppressions WHERE tenant_id = @tenant AND address = @address AND ${LIVE}`,
  );
  // An operator's entry is theirs: a bounce or complaint does not replace it while it lasts.
  const upsert =
    db.prepare(`INSERT INTO suppressions (${COLUMNS}) VALUES (@tenant_id, @address, @reason, @source, @created_at, @expires_at)
    ON CONFLICT (tenant_id, address) DO UPDATE SET reason = excluded.reason, source = excluded.source, created_at = excluded.created_at, expires_at = excluded.expires_at
    WHERE suppressions.source <> 'manual' OR excluded.source = 'manual' OR (suppressions.expires_at IS NOT NULL AND suppressions.expires_at <= excluded.created_at)`);
  const remove = db.prepare(`DELETE FROM suppressions WHERE tenant_id = ? AND address = ?`);

  return {
    list: (tenantId, options) => {
      const prefix = options.prefix ?? '';
      // The smallest string above every string that starts with the prefix.
      const prefixEnd =
        prefix === ''
          ? '\u{10FFFF}'
          : prefix.slice(0, -1) + String.fromCodePoint((prefix.codePointAt(prefix.length - 1) ?? 0) + 1);
      return list
        .all({
          tenant: tenantId,
          after: options.after ?? '',
          prefix,
          prefixEnd,
          now: options.now,
          limit: options.limit,
        })
        .map(toRecord);
    },
    get: (tenantId, address, now) => {
      const row = get.get({ tenant: tenantId, address, now });
      return row === undefined ? null : toRecord(row);
    },
    upsert: (record) => {
      upsert.run({
        tenant_id: record.tenantId,
        address: record.address,
        reason: record.reason,
        source: record.source,
        created_at: record.createdAt,
        expires_at: record.expiresAt,
      });
    },
    remove: (tenantId, address) => remove.run(tenantId, address).changes > 0,
  };
}
