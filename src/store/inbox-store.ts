/** SQLite side of the command inbox (schema migration 6). */
import type { InboxStore } from '../core/events/index.js';
import type { SqliteDatabase } from './database.js';

export function createSqliteInboxStore(db: SqliteDatabase): InboxStore {
  const has = db.prepare<[string], number>(`SELECT 1 FROM inbox WHERE id = ?`).pluck();
  const insert = db.prepare(
    `INSERT INTO inbox (id, subject, tenant_id, command, received_at, outcome) VALUES (?, ?, ?, ?, ?, ?)`,
  );
  const prune = db.prepare(`DELETE FROM inbox WHERE received_at < ?`);
  return {
    has: (id) => has.get(id) !== undefined,
    record: (entry) => {
      insert.run(
        entry.id,
        entry.subject,
        entry.tenantId,
        entry.command,
        entry.receivedAt,
        JSON.stringify(entry.outcome),
      );
    },
    prune: (before) => prune.run(before).changes,
  };
}
