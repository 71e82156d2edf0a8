import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { checkDatabaseFile, databaseInUse, removeAbandonedSnapshots, takeSnapshot } from './backup.js';
import { openDatabase } from './database.js';
import { restoreDatabase } from './restore.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mailproxy-backup-'));
  dirs.push(dir);
  return dir;
}

/** A migrated database with a tenant and `count` messages of ~4 KB each (many pages to copy). */
function filledDatabase(path: string, count: number) {
  const { db } = openDatabase({ path });
  db.prepare(
    `INSERT INTO tenants (id, api_key_hash, api_key_created_at, created_at, updated_at) VALUES ('t', 'h', 0, 0, 0)`,
  ).run();
  const insert =
    db.prepare(`INSERT INTO messages (tenant_id, id, account_id, source, payload, mail_from, rcpt_to, next_attempt_at, created_at, updated_at)
    VALUES ('t', ?, 'a', 'http', ?, 'a@example.com', '[]', 0, 0, 0)`);
  let next = 0;
  const add = (n: number): void => {
    db.transaction(() => {
      for (let index = 0; index < n; index += 1) insert.run(`m${next++}`, 'x'.repeat(4000));
    })();
  };
  add(count);
  return { db, add, added: () => next };
}

describe('database snapshots', () => {
  it('holds every row the writer committed while it was being taken, and nothing half-written', async () => {
    const dir = tempDir();
    const { db, add, added } = filledDatabase(join(dir, 'mailproxy.db'), 3000);
    let writesDuring = 0;
    let done = false;
    const writer = (): void => {
      if (done) return;
      add(10);
      writesDuring += 1;
      setImmediate(writer);
    };
    setImmediate(writer);
    const snapshot = await takeSnapshot(db, join(dir, 'mailproxy.db'));
    done = true;
    const committedAtEnd = added();

    // The copy stepped across several turns, and the writer wrote between them.
    expect(writesDuring).toBeGreaterThan(0);
    const copy = new Database(snapshot.path, { readonly: true });
    expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(copy.pragma('journal_mode', { simple: true })).toBe('delete');
    expect(copy.prepare('SELECT count(*) FROM messages').pluck().get()).toBe(committedAtEnd);
    copy.close();
    snapshot.remove();
    expect(readdirSync(dir).filter((name) => name.includes('backup'))).toEqual([]);
    db.close();
  });

  it('removes the copies a run left behind, and nothing else, at the next start', () => {
    const dir = tempDir();
    const path = join(dir, 'mailproxy.db');
    const { db } = filledDatabase(path, 1);
    for (const name of [
      '.mailproxy.db.backup-1.tmp',
      '.mailproxy.db.backup-2.tmp-journal',
      'mailproxy.db.before-restore-1',
      'backup.db',
    ])
      writeFileSync(join(dir, name), 'x');
    expect(removeAbandonedSnapshots(path)).toBe(2);
    expect(
      readdirSync(dir)
        .filter((name) => !name.startsWith('mailproxy.db-'))
        .sort(),
    ).toEqual(['backup.db', 'mailproxy.db', 'mailproxy.db.before-restore-1']);
    db.close();
  });
});

describe('checking and restoring a database file', () => {
  it('accepts a whole mailproxy database and says why it refuses anything else', () => {
    const dir = tempDir();
    const { db } = filledDatabase(join(dir, 'good.db'), 3);
    db.close();
    expect(checkDatabaseFile(join(dir, 'good.db'))).toMatchObject({
      ok: true,
      messages: 3,
      schemaVersion: expect.any(Number),
    });

    writeFileSync(join(dir, 'text.db'), 'not a database at all, just text that is long enough to have a header');
    expect(checkDatabaseFile(join(dir, 'text.db'))).toMatchObject({ ok: false, code: 'NOT_A_DATABASE' });
    expect(checkDatabaseFile(join(dir, 'absent.db'))).toMatchObject({ ok: false, code: 'UNREADABLE' });
    const other = new Database(join(dir, 'other.db'));
    other.exec('CREATE TABLE t (x)');
    other.close();
    expect(checkDatabaseFile(join(dir, 'other.db'))).toMatchObject({ ok: false, code: 'NOT_MAILPROXY' });
    const newer = new Database(join(dir, 'good.db'));
    newer.pragma('user_version = 999');
    newer.close();
    expect(checkDatabaseFile(join(dir, 'good.db'))).toMatchObject({ ok: false, code: 'SCHEMA_TOO_NEW' });
  });

  it('refuses a database another connection has open, and moves the current one aside rather than deleting it', () => {
    const dir = tempDir();
    const { db: source } = filledDatabase(join(dir, 'backup.db'), 5);
    source.close();
    const target = join(dir, 'data', 'mailproxy.db');
    const { db: current } = filledDatabase(target, 2);
    expect(databaseInUse(target)).toBe(true);
    expect(restoreDatabase({ source: join(dir, 'backup.db'), target, stamp: 's1', force: true })).toMatchObject({
      ok: false,
      code: 'DATABASE_IN_USE',
    });
    current.close();
    expect(databaseInUse(target)).toBe(false);
    expect(restoreDatabase({ source: join(dir, 'backup.db'), target, stamp: 's1', force: false })).toMatchObject({
      ok: false,
      code: 'DATABASE_EXISTS',
    });

    const restored = restoreDatabase({ source: join(dir, 'backup.db'), target, stamp: 's1', force: true });
    expect(restored).toMatchObject({ ok: true, messages: 5, movedAside: [`${target}.before-restore-s1`] });
    // The old database's WAL went aside with it: the restored file is not read through it.
    expect(existsSync(`${target}-wal`)).toBe(false);
    expect(checkDatabaseFile(target)).toMatchObject({ ok: true, messages: 5 });
    expect(checkDatabaseFile(`${target}.before-restore-s1`)).toMatchObject({ ok: true, messages: 2 });
  });
});
