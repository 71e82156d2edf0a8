/**
 * Fleet mode: this node's copy of the shared configuration, by bucket key. An
 * object is read as its rows as stored (secrets and suppressed addresses sealed,
 * the API key as its digest, a suppression keyed by its address's digest) and applied as those rows, in one transaction with the change's audit
 * records and the revision applied. Columns come from the table itself, so a
 * value from another version never names a column that is not there.
 */
import { configKeyName, type ConfigEntry, type ConfigKey, type ConfigRows } from '../core/fleet/index.js';
import type { ChangeLog } from '../core/index.js';
import { durableTransaction, type SqliteDatabase } from './database.js';
import { PENDING_STATES_SQL, type SqliteTenantRepository } from './tenant-repository.js';

type Row = Record<string, unknown>;

interface TableOf {
  table: 'tenants' | 'accounts' | 'suppressions' | 'suspensions';
  /** The columns that select the object's rows, with the key's values for them. */
  where: Record<string, string>;
}

function tableOf(key: ConfigKey): TableOf {
  switch (key.kind) {
    case 'tenant':
      return { table: 'tenants', where: { id: key.tenantId } };
    case 'account':
      return { table: 'accounts', where: { tenant_id: key.tenantId, id: key.accountId } };
    case 'suppression':
      return { table: 'suppressions', where: { tenant_id: key.tenantId, address_digest: key.digest } };
    case 'suspensions':
      return { table: 'suspensions', where: { tenant_id: key.tenantId } };
  }
}

const PRIMARY_KEYS: Record<TableOf['table'], string[]> = {
  tenants: ['id'],
  accounts: ['tenant_id', 'id'],
  suppressions: ['tenant_id', 'address_digest'],
  suspensions: ['tenant_id', 'batch_code'],
};

class DryRun extends Error {}

export interface ConfigRowsDeps {
  /** This node: a change it took itself is mirrored from here; another node's is only audited here. */
  nodeId: string;
  changes: ChangeLog;
  /** Tenants are deleted through their repository, and its cache of tenants and key holders is dropped on every write. */
  tenants: Pick<SqliteTenantRepository, 'get' | 'delete' | 'forgetCached'>;
  /** Re-derives which waiting messages are held (a tenant's `active`, its suspensions). */
  refreshHolds(tenantId: string, at: number): void;
  now(): number;
}

/** Reads and upserts of a table's rows as stored, by the columns the table has here. */
function createTableRows(db: SqliteDatabase) {
  const columns = new Map<string, Set<string>>();
  const columnsOf = (table: string): Set<string> => {
    let known = columns.get(table);
    if (known === undefined) {
      known = new Set(
        (db.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>).map((column) => column.name),
      );
      columns.set(table, known);
    }
    return known;
  };
  const whereSql = (where: Record<string, string>): string =>
    Object.keys(where)
      .map((column) => `${column} = @${column}`)
      .join(' AND ');
  const read = (key: ConfigKey): Row[] | null => {
    const { table, where } = tableOf(key);
    const rows = db.prepare(`SELECT * FROM ${table} WHERE ${whereSql(where)} ORDER BY rowid`).all(where) as Row[];
    return rows.length === 0 ? null : rows;
  };

  const upsert = (table: TableOf['table'], row: Row): void => {
    const known = columnsOf(table);
    const names = Object.keys(row).filter((name) => known.has(name));
    const keys = PRIMARY_KEYS[table];
    const updates = names.filter((name) => !keys.includes(name)).map((name) => `${name} = excluded.${name}`);
    // An upsert, never INSERT OR REPLACE: a replace deletes the row first, and the delete would cascade to the tenant's messages.
    db.prepare(
      `INSERT INTO ${table} (${names.join(', ')}) VALUES (${names.map((name) => `@${name}`).join(', ')})
       ON CONFLICT (${keys.join(', ')}) DO ${updates.length === 0 ? 'NOTHING' : `UPDATE SET ${updates.join(', ')}`}`,
    ).run(Object.fromEntries(names.map((name) => [name, row[name]])));
  };

  return { whereSql, read, upsert };
}

/** Writes an object's rows under its key, with what a local write of it would do beside. */
function createConfigWriter(
  db: SqliteDatabase,
  deps: ConfigRowsDeps,
  { whereSql, upsert }: ReturnType<typeof createTableRows>,
) {
  const writeTenant = (tenantId: string, rows: Row[] | null): void => {
    if (rows === null) {
      if (deps.tenants.get(tenantId) !== null) deps.tenants.delete(tenantId);
      return;
    }
    for (const row of rows) upsert('tenants', row);
    // As a tenant created here would: its reports start from now, not from the outbox's beginning.
    db.prepare(
      `INSERT OR IGNORE INTO report_state (tenant_id, cursor_seq) VALUES (?, (SELECT coalesce(max(seq), 0) FROM outbox))`,
    ).run(tenantId);
    // The repository forgets the tenants and key holders it knew: the new row is what is read (its settings, its
    // domains), and a rotated key stops working here too. (Rewriting a tenant read from the cache would put back
    // the row as it was before this change.)
    deps.tenants.forgetCached();
    deps.refreshHolds(tenantId, deps.now());
  };

  const writeAccount = (tenantId: string, accountId: string, rows: Row[] | null): void => {
    if (rows === null) {
      // As the account's own delete does: mail that would otherwise wait forever for it goes with it.
      db.prepare(`DELETE FROM messages WHERE tenant_id = ? AND account_id = ? AND state IN ${PENDING_STATES_SQL}`).run(
        tenantId,
        accountId,
      );
      db.prepare(`DELETE FROM accounts WHERE tenant_id = ? AND id = ?`).run(tenantId, accountId);
      return;
    }
    for (const row of rows) {
      // One default per tenant: the former default's own change may not have arrived yet.
      if (row.is_default === 1)
        db.prepare(`UPDATE accounts SET is_default = 0 WHERE tenant_id = ? AND id <> ? AND is_default = 1`).run(
          tenantId,
          accountId,
        );
      upsert('accounts', row);
    }
  };

  const writeRows = (key: ConfigKey, rows: Row[] | null): void => {
    const { table, where } = tableOf(key);
    switch (key.kind) {
      case 'tenant':
        return writeTenant(key.tenantId, rows);
      case 'account':
        return writeAccount(key.tenantId, key.accountId, rows);
      case 'suppression':
      case 'suspensions':
        // The whole set under the key is replaced: activating `*` removes every suspension of the tenant.
        db.prepare(`DELETE FROM ${table} WHERE ${whereSql(where)}`).run(where);
        for (const row of rows ?? []) upsert(table, row);
        if (key.kind === 'suspensions') deps.refreshHolds(key.tenantId, deps.now());
    }
  };

  return writeRows;
}

/** Runs `fn` in a transaction that is always rolled back, and answers what it returned. */
function dryRun<T>(db: SqliteDatabase, fn: () => T): T {
  let result: T | undefined;
  try {
    db.transaction(() => {
      result = fn();
      throw new DryRun();
    })();
  } catch (error) {
    if (!(error instanceof DryRun)) throw error;
  }
  return result as T;
}

export function createSqliteConfigRows(db: SqliteDatabase, deps: ConfigRowsDeps): ConfigRows {
  const tableRows = createTableRows(db);
  const { read } = tableRows;
  const revisionOf = db.prepare<[string], { revision: number }>(`SELECT revision FROM config_revisions WHERE key = ?`);
  const lastRevision = db.prepare<[], { revision: number | null }>(
    `SELECT max(revision) AS revision FROM config_revisions`,
  );
  const setRevision = db.prepare(
    `INSERT INTO config_revisions (key, revision) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET revision = excluded.revision`,
  );

  const writeRows = createConfigWriter(db, deps, tableRows);
  const appliedRevision = (key: ConfigKey): number | null => revisionOf.get(configKeyName(key))?.revision ?? null;

  return {
    dryRun: (fn) => dryRun(db, fn),
    read,
    appliedRevision,
    lastRevision: () => lastRevision.get()?.revision ?? 0,
    apply(entry: ConfigEntry): boolean {
      const name = configKeyName(entry.key);
      // Durable like any admin write: a change applied here is not asked for again after a power loss.
      return durableTransaction(db, () => {
        const applied = revisionOf.get(name)?.revision ?? 0;
        if (applied >= entry.revision) return false;
        writeRows(entry.key, entry.value.rows);
        const origin = entry.value.origin;
        for (const change of entry.value.changes)
          deps.changes.record({ ...change, node: origin, ...(origin === deps.nodeId ? {} : { auditOnly: true }) });
        setRevision.run(name, entry.revision);
        return true;
      });
    },
  };
}
