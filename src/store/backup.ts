/**
 * Online backups and their checks. A snapshot is SQLite's backup API stepped
 * between event-loop turns on the daemon's own writer connection: a write made
 * meanwhile through that connection is copied into the backup too, so the
 * finished file is the database as of one commit, while intake goes on.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import type { SqliteDatabase } from './database.js';
import { loadMigrations } from './migrations.js';

/** A consistent copy of the database in a temporary file beside it. */
export interface DatabaseSnapshot {
  path: string;
  bytes: number;
  /** Deletes the file (an open descriptor keeps reading it on POSIX). */
  remove(): void;
}

/** Pages copied per step: 100 pages of 16 KiB keep each step to a few milliseconds of the writer's thread. */
const PAGES_PER_STEP = 100;

const snapshotPrefix = (databasePath: string): string => `.${basename(databasePath)}.backup-`;

export async function takeSnapshot(db: SqliteDatabase, databasePath: string): Promise<DatabaseSnapshot> {
  // A dot file with a random name: two backups never share one, and a leftover is recognisable.
  const path = join(dirname(databasePath), `${snapshotPrefix(databasePath)}${randomUUID()}.tmp`);
  const remove = (): void => {
    for (const suffix of ['', '-journal', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
  };
  try {
    await db.backup(path, { progress: () => PAGES_PER_STEP });
    // The copy carries the WAL flag of its source; a rollback-journal file stands alone (no -wal to lose on the way).
    const copy = new Database(path);
    try {
      copy.pragma('journal_mode = DELETE');
    } finally {
      copy.close();
    }
    return { path, bytes: statSync(path).size, remove };
  } catch (error) {
    remove();
    throw error;
  }
}

/**
 * Removes the snapshots a previous run left behind (it died while copying or
 * before it could delete one): at start no backup is being taken. Answers how many.
 */
export function removeAbandonedSnapshots(databasePath: string): number {
  const prefix = snapshotPrefix(databasePath);
  const left = readdirSync(dirname(databasePath)).filter((name) => name.startsWith(prefix));
  for (const name of left) rmSync(join(dirname(databasePath), name), { force: true });
  return left.length;
}

export type DatabaseCheckCode = 'UNREADABLE' | 'NOT_A_DATABASE' | 'NOT_MAILPROXY' | 'CORRUPT' | 'SCHEMA_TOO_NEW';

export type DatabaseCheck =
  | { ok: true; bytes: number; schemaVersion: number; supportedVersion: number; messages: number }
  | { ok: false; code: DatabaseCheckCode; problem: string };

/**
 * Is `path` a whole mailproxy database this build can open? `PRAGMA
 * integrity_check` reads every page; the schema version must not be newer than
 * this build's migrations (an older one is migrated when the daemon starts).
 */
export function checkDatabaseFile(path: string): DatabaseCheck {
  if (!existsSync(path)) return { ok: false, code: 'UNREADABLE', problem: `${path}: no such file` };
  let db: SqliteDatabase;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
  } catch (error) {
    return { ok: false, code: 'UNREADABLE', problem: `${path}: cannot open (${(error as Error).message})` };
  }
  try {
    const supportedVersion = loadMigrations().length;
    let schemaVersion: number;
    try {
      schemaVersion = db.pragma('user_version', { simple: true }) as number;
    } catch (error) {
      return {
        ok: false,
        code: 'NOT_A_DATABASE',
        problem: `${path}: not an SQLite database (${(error as Error).message})`,
      };
    }
    const problems = (db.pragma('integrity_check') as { integrity_check: string }[]).map((row) => row.integrity_check);
    if (problems.length !== 1 || problems[0] !== 'ok') {
      return {
        ok: false,
        code: 'CORRUPT',
        problem: `${path}: integrity check failed: ${problems.slice(0, 5).join('; ')}`,
      };
    }
    if (schemaVersion > supportedVersion) {
      return {
        ok: false,
        code: 'SCHEMA_TOO_NEW',
        problem: `${path}: schema version ${schemaVersion} is newer than this mailproxy (${supportedVersion}); restore it with a newer mailproxy`,
      };
    }
    const hasMessages =
      db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'messages'").get() !== undefined;
    if (schemaVersion === 0 || !hasMessages)
      return { ok: false, code: 'NOT_MAILPROXY', problem: `${path}: an SQLite database, but not a mailproxy one` };
    const { count } = db.prepare('SELECT count(*) AS count FROM messages').get() as { count: number };
    return { ok: true, bytes: statSync(path).size, schemaVersion, supportedVersion, messages: count };
  } catch (error) {
    return { ok: false, code: 'CORRUPT', problem: `${path}: ${(error as Error).message}` };
  } finally {
    db.close();
  }
}

/**
 * Whether another connection has the database open (a running daemon keeps
 * its writer and checkpointer connections open for its whole life). SQLite
 * refuses an exclusive lock while any other connection holds one of its locks,
 * so the check is SQLite's own rather than a pid file that may be stale.
 */
export function databaseInUse(path: string): boolean {
  if (!existsSync(path)) return false;
  const db = new Database(path, { fileMustExist: true, timeout: 0 });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
    db.exec('COMMIT');
    return false;
  } catch (error) {
    if ((error as { code?: string }).code?.startsWith('SQLITE_BUSY') === true) return true;
    throw error;
  } finally {
    db.close();
  }
}
