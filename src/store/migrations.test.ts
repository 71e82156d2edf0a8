import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { loadMigrations, migrate, parseMigrations } from './migrations.js';

describe('schema migrations', () => {
  it('applies schema.sql to an empty database once', () => {
    const db = new Database(':memory:');
    const migrations = loadMigrations();
    expect(migrate(db, migrations)).toEqual(migrations.map((migration) => migration.version));
    expect(db.pragma('user_version', { simple: true })).toBe(migrations.length);
    const tables = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`).pluck().all();
    expect(tables).toEqual(['account_usage', 'accounts', 'command_log', 'message_events', 'messages', 'outbox', 'suppressions', 'suspensions', 'tenants']);
    expect(migrate(db, migrations)).toEqual([]);
  });

  it('uses the due index for the dispatcher query', () => {
    const db = new Database(':memory:');
    migrate(db, loadMigrations());
    const plan = db.prepare(`EXPLAIN QUERY PLAN SELECT pk FROM messages WHERE tenant_id = ? AND account_id = ?
      AND state IN ('queued', 'deferred') AND suspended = 0 AND priority = 0 AND next_attempt_at <= ?
      ORDER BY next_attempt_at, pk LIMIT 10`).all('t', 'a', 0) as { detail: string }[];
    expect(plan.map((row) => row.detail).join(' ')).toContain('messages_due');
  });

  it('refuses a database from a newer version', () => {
    const db = new Database(':memory:');
    db.pragma('user_version = 99');
    expect(() => migrate(db, loadMigrations())).toThrow(expect.objectContaining({ code: 'STORE_UNAVAILABLE' }));
  });

  it('rolls back a failing migration and keeps the version', () => {
    const db = new Database(':memory:');
    const broken = parseMigrations('-- migration: 1\nCREATE TABLE a (x);\n-- migration: 2\nCREATE TABLE b (y); SELECT * FROM missing;\n');
    expect(() => migrate(db, broken)).toThrow();
    expect(db.pragma('user_version', { simple: true })).toBe(1);
    expect(db.prepare(`SELECT count(*) FROM sqlite_master WHERE name = 'b'`).pluck().get()).toBe(0);
  });

  it('rejects gaps in the numbering', () => {
    expect(() => parseMigrations('-- migration: 1\nSELECT 1;\n-- migration: 3\nSELECT 1;\n')).toThrow('migration 3 found where 2 was expected');
  });
});
