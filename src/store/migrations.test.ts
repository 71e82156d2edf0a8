import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { SecretBox } from '../core/ports.js';
import { createSqliteAccountRepository } from './account-repository.js';
import { loadMigrations, migrate, parseMigrations } from './migrations.js';
import { PENDING_STATES_SQL } from './tenant-repository.js';
import { REPORTABLE_SQL } from './outbox-predicates.js';
import { REPORTABLE_EVENTS } from '../core/report/index.js';

describe('schema migrations', () => {
  it('applies schema.sql to an empty database once', () => {
    const db = new Database(':memory:');
    const migrations = loadMigrations();
    expect(migrate(db, migrations)).toEqual(migrations.map((migration) => migration.version));
    expect(db.pragma('user_version', { simple: true })).toBe(migrations.length);
    const tables = db
      .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
      .pluck()
      .all();
    expect(tables).toEqual([
      'account_usage',
      'accounts',
      'bounce_mailboxes',
      'bounce_messages',
      'command_log',
      'config_revisions',
      'data_keys',
      'destination_usage',
      'erased_search_terms',
      'fleet_claim_cursor',
      'fleet_claims',
      'handed_objects',
      'inbox',
      'kept_keys',
      'message_bodies',
      'message_files',
      'message_search_terms',
      'messages',
      'messages_terms',
      'messages_terms_config',
      'messages_terms_data',
      'messages_terms_docsize',
      'messages_terms_idx',
      'mirror_state',
      'object_removals',
      'outbox',
      'pec_receipts',
      'provider_events',
      'report_attempts',
      'report_state',
      'search_state',
      'shredded_bodies',
      'spool_parts',
      'spools',
      'suppressions',
      // Migration 20 keeps the clear rows aside until the store seals them at open (suppression-conversion.ts).
      'suppressions_clear',
      'suspensions',
      'tenants',
    ]);
    expect(migrate(db, migrations)).toEqual([]);
  });

  it('uses the due index for the dispatcher query', () => {
    const db = new Database(':memory:');
    migrate(db, loadMigrations());
    const plan = db
      .prepare(
        `EXPLAIN QUERY PLAN SELECT pk FROM messages WHERE tenant_id = ? AND account_id = ?
      AND state IN ('queued', 'deferred') AND suspended = 0 AND priority = 0 AND next_attempt_at <= ?
      ORDER BY next_attempt_at, pk LIMIT 10`,
      )
      .all('t', 'a', 0) as { detail: string }[];
    expect(plan.map((row) => row.detail).join(' ')).toContain('messages_due');
  });

  it('reads reportable events past a cursor from the reportable index: its predicate names every REPORTABLE_EVENTS type', () => {
    const db = new Database(':memory:');
    migrate(db, loadMigrations());
    const plan = db
      .prepare(
        `EXPLAIN QUERY PLAN SELECT seq FROM outbox WHERE tenant_id = ? AND ${REPORTABLE_SQL} AND seq > ? ORDER BY seq`,
      )
      .all('t', 0) as { detail: string }[];
    expect(plan.map((row) => row.detail).join(' ')).toContain('outbox_reportable');
    // The pruning trigger keeps the same events until they are reported.
    const trigger = db
      .prepare(`SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'messages_outbox_removed'`)
      .pluck()
      .get() as string;
    for (const type of REPORTABLE_EVENTS) expect(trigger).toContain(`'message.${type}'`);
  });

  it('serves suspension and pending-message checks from the pending index', () => {
    const db = new Database(':memory:');
    migrate(db, loadMigrations());
    const planOf = (sql: string): string =>
      (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all('t', 'a') as { detail: string }[])
        .map((row) => row.detail)
        .join(' ');
    expect(
      planOf(`SELECT count(*) FROM messages WHERE tenant_id = ? AND account_id = ? AND state IN ${PENDING_STATES_SQL}`),
    ).toContain('messages_pending');
    expect(
      planOf(
        `UPDATE messages SET suspended = 1 WHERE tenant_id = ? AND batch_code = ? AND state IN ${PENDING_STATES_SQL} AND state <> 'sending'`,
      ),
    ).toContain('messages_pending');
  });

  it('counts the waiting messages by status and priority from the pending index alone (migration 10)', () => {
    const db = new Database(':memory:');
    migrate(db, loadMigrations());
    const plan = (
      db
        .prepare(
          `EXPLAIN QUERY PLAN SELECT tenant_id, account_id, CASE WHEN suspended = 1 AND state <> 'sending' THEN 'suspended' ELSE state END AS status,
      priority, count(*) FROM messages WHERE state IN ${PENDING_STATES_SQL} AND (? IS NULL OR tenant_id = ?) GROUP BY 1, 2, 3, 4`,
        )
        .all(null, null) as { detail: string }[]
    )
      .map((row) => row.detail)
      .join(' ');
    expect(plan).toContain('COVERING INDEX messages_pending');
  });

  it('migration 2 keeps every event of a version-1 database, timeline and mirror alike', () => {
    const db = new Database(':memory:');
    const migrations = loadMigrations();
    migrate(db, migrations.slice(0, 1));
    db.exec(`INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, tenant_id, message_pk, message_id, account_id, attempt, payload, occurred_at)
      VALUES ('e1', 'message', 't/m1', 'message.deferred', 't', 7, 'm1', 'a', 1, '{"state":"deferred","reply_code":451,"enhanced_status":"4.3.0","text":"busy","retry_in":60}', 1000),
             ('e2', 'tenant', 't', 'tenant.created', 't', NULL, NULL, NULL, NULL, '{"name":"T"}', 900)`);
    migrate(db, migrations);
    expect(
      db
        .prepare(
          `SELECT id, event_type, message_pk, reply_code, enhanced_status, text, payload FROM outbox ORDER BY seq`,
        )
        .all(),
    ).toEqual([
      {
        id: 'e1',
        event_type: 'message.deferred',
        message_pk: 7,
        reply_code: 451,
        enhanced_status: '4.3.0',
        text: 'busy',
        payload: '{"retry_in":60}',
      },
      {
        id: 'e2',
        event_type: 'tenant.created',
        message_pk: null,
        reply_code: null,
        enhanced_status: null,
        text: null,
        payload: '{"name":"T"}',
      },
    ]);
  });

  it('migration 11 keeps the accounts of a version-10 database, as accounts that are not PEC and have no mailbox', () => {
    const db = new Database(':memory:');
    const migrations = loadMigrations();
    migrate(db, migrations.slice(0, 10));
    // A stand-in of our own port: this test is about columns, not encryption.
    const secrets: SecretBox = {
      seal: (text, context) => `${context}|${text}`,
      open: (sealed, context) => sealed.slice(context.length + 1),
    };
    db.exec(
      `INSERT INTO tenants (id, api_key_hash, api_key_created_at, created_at, updated_at) VALUES ('t', 'h', 0, 0, 0)`,
    );
    db.prepare(
      `INSERT INTO accounts (tenant_id, id, host, port, user, password_sealed, tls_mode, created_at, updated_at)
      VALUES ('t', 'relay', 'smtp.example.com', 587, 'u', ?, 'starttls', 1, 2)`,
    ).run(secrets.seal('pw', 'account:t/relay:password'));
    migrate(db, migrations);
    const accounts = createSqliteAccountRepository(db, secrets);
    expect(accounts.get('t', 'relay')).toMatchObject({
      host: 'smtp.example.com',
      port: 587,
      user: 'u',
      password: 'pw',
      isPec: false,
      imap: null,
      updatedAt: 2,
    });
    expect(accounts.pecMailboxes()).toEqual([]);
  });

  it("migration 12 makes each tenant's only account its default, and leaves a tenant with several accounts and none marked without one", () => {
    const db = new Database(':memory:');
    const migrations = loadMigrations();
    migrate(db, migrations.slice(0, 11));
    const tenant = db.prepare(
      `INSERT INTO tenants (id, api_key_hash, api_key_created_at, created_at, updated_at) VALUES (?, ?, 0, 0, 0)`,
    );
    const account = db.prepare(
      `INSERT INTO accounts (tenant_id, id, host, port, tls_mode, is_default, created_at, updated_at) VALUES (?, ?, 'smtp.example.com', 587, 'starttls', ?, 1, 2)`,
    );
    for (const id of ['single', 'several', 'marked']) tenant.run(id, `hash-${id}`);
    account.run('single', 'only', 0);
    account.run('several', 'a1', 0);
    account.run('several', 'a2', 0);
    account.run('marked', 'm1', 0);
    account.run('marked', 'm2', 1);
    migrate(db, migrations);
    const marks = db.prepare(`SELECT tenant_id, id, is_default FROM accounts ORDER BY tenant_id, id`).all();
    expect(marks).toEqual([
      { tenant_id: 'marked', id: 'm1', is_default: 0 },
      { tenant_id: 'marked', id: 'm2', is_default: 1 },
      { tenant_id: 'several', id: 'a1', is_default: 0 },
      { tenant_id: 'several', id: 'a2', is_default: 0 },
      { tenant_id: 'single', id: 'only', is_default: 1 },
    ]);
  });

  it('keeps a tenant to one default account in the store itself', () => {
    const db = new Database(':memory:');
    migrate(db, loadMigrations());
    db.exec(
      `INSERT INTO tenants (id, api_key_hash, api_key_created_at, created_at, updated_at) VALUES ('t', 'h', 0, 0, 0)`,
    );
    const account = db.prepare(
      `INSERT INTO accounts (tenant_id, id, host, port, tls_mode, is_default, created_at, updated_at) VALUES ('t', ?, 'smtp.example.com', 587, 'starttls', 1, 1, 2)`,
    );
    account.run('a1');
    expect(() => account.run('a2')).toThrow(/UNIQUE constraint failed/);
  });

  it('refuses a database from a newer version', () => {
    const db = new Database(':memory:');
    db.pragma('user_version = 99');
    expect(() => migrate(db, loadMigrations())).toThrow(expect.objectContaining({ code: 'STORE_UNAVAILABLE' }));
  });

  it('rolls back a failing migration and keeps the version', () => {
    const db = new Database(':memory:');
    const broken = parseMigrations(
      '-- migration: 1\nCREATE TABLE a (x);\n-- migration: 2\nCREATE TABLE b (y); SELECT * FROM missing;\n',
    );
    expect(() => migrate(db, broken)).toThrow();
    expect(db.pragma('user_version', { simple: true })).toBe(1);
    expect(db.prepare(`SELECT count(*) FROM sqlite_master WHERE name = 'b'`).pluck().get()).toBe(0);
  });

  it('rejects gaps in the numbering', () => {
    expect(() => parseMigrations('-- migration: 1\nSELECT 1;\n-- migration: 3\nSELECT 1;\n')).toThrow(
      'migration 3 found where 2 was expected',
    );
  });
});
