/**
 * Opens the SQLite database: one writer connection, WAL, foreign keys, schema
 * migrated before anything else touches it.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { loadMigrations, migrate } from './migrations.js';

export type SqliteDatabase = Database.Database;

export interface OpenDatabaseOptions {
  path: string;
  /** How long a statement waits for a lock held by another process (backup, CLI). */
  busyTimeoutMs?: number;
  /**
   * WAL pages after which a commit checkpoints by itself (SQLite's default is
   * 1000). Raised when a checkpointer thread does that work (checkpointer.ts).
   */
  walAutocheckpointPages?: number;
  /**
   * Largest size the database may grow to (0: no limit). Past it a write fails
   * with SQLITE_FULL, which intake answers 503 / 451 and keeps nothing, as on a
   * full disk: a cap keeps the appliance from filling a disk it shares.
   */
  maxBytes?: number;
}

export function openDatabase(options: OpenDatabaseOptions): { db: SqliteDatabase; migrated: number[] } {
  mkdirSync(dirname(options.path), { recursive: true, mode: 0o700 });
  const db = new Database(options.path);
  try {
    // 16 KiB pages for a new database (an existing one keeps its own): a 2 KB
    // message and its index entries touch fewer pages, and a commit writes fewer
    // WAL frames: intake gains, the relay path is unchanged.
    db.pragma('page_size = 16384');
    db.pragma('journal_mode = WAL');
    // NORMAL in WAL mode survives a process crash (kill -9) but not a power loss.
    // That is the default for the dispatcher's bookkeeping (a lost outcome means
    // a message is sent again, never lost); an admin change commits at FULL (see
    // durableTransaction), and intake's group commits are synced off this thread
    // before anyone is answered (wal-sync.ts).
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    // Freed cell space is zeroed as it is freed (at no extra I/O): an updated or deleted row leaves
    // no copy of its personal data in the page's free space for an erasure to miss (issue 45).
    db.pragma('secure_delete = FAST');
    // A savepoint's journal stays in memory: with 16 KiB pages a one-message
    // savepoint outgrows the in-memory default and a temporary file was created,
    // written and deleted on every commit.
    db.pragma('temp_store = MEMORY');
    // A larger page cache (64 MiB) keeps the hot indexes in memory under load.
    db.pragma('cache_size = -65536');
    db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
    if (options.walAutocheckpointPages !== undefined)
      db.pragma(`wal_autocheckpoint = ${options.walAutocheckpointPages}`);
    const migrated = migrate(db, loadMigrations());
    if (options.maxBytes !== undefined && options.maxBytes > 0) {
      const pageSize = db.pragma('page_size', { simple: true }) as number;
      db.pragma(`max_page_count = ${Math.max(1, Math.floor(options.maxBytes / pageSize))}`);
    }
    return { db, migrated };
  } catch (error) {
    db.close();
    throw error;
  }
}

type Runner = <T>(fn: () => T, begin?: 'immediate') => T;
const runners = new WeakMap<SqliteDatabase, Runner>();

/**
 * Runs `fn` in a transaction of better-sqlite3's (a savepoint when one is open;
 * `.immediate` begins with the write lock). One wrapper per database, made once:
 * `db.transaction(fn)` builds four closures and a property set on every call,
 * which showed in the intake profile once per message.
 */
export function transactionRunner(db: SqliteDatabase): Runner {
  let runner = runners.get(db);
  if (runner === undefined) {
    const wrapped = db.transaction((fn: () => unknown) => fn());
    runner = <T>(fn: () => T, begin?: 'immediate'): T =>
      (begin === 'immediate' ? wrapped.immediate(fn) : wrapped(fn)) as T;
    runners.set(db, runner);
  }
  return runner;
}

/**
 * Runs `fn` in an IMMEDIATE transaction committed with synchronous = FULL, so
 * that once it returns the change survives a power loss too. Inside another
 * transaction it is a savepoint of that one, whose own commit decides.
 */
export function durableTransaction<T>(db: SqliteDatabase, fn: () => T): T {
  const run = transactionRunner(db);
  if (db.inTransaction) {
    try {
      return run(fn);
    } catch (error) {
      // SQLITE_FULL, IOERR, NOMEM may roll back the whole transaction, not just
      // this savepoint: the caller must not go on as if the outer one still held.
      if (!db.inTransaction)
        throw Object.assign(new Error(`the enclosing transaction was rolled back: ${(error as Error).message}`), {
          code: 'SQLITE_ABORT_ROLLBACK',
          cause: error,
        });
      throw error;
    }
  }
  db.pragma('synchronous = FULL');
  try {
    return run(fn, 'immediate');
  } finally {
    db.pragma('synchronous = NORMAL');
  }
}

/** `PRAGMA secure_delete` answers 0, 1 or 2; setting it back takes FAST for 2 (a 2 would read as ON). */
const SECURE_DELETE_SETTING: Record<number, string> = { 0: 'OFF', 1: 'ON', 2: 'FAST' };

/**
 * Runs `fn` with secure_delete ON: whole freed pages (a large body's overflow pages) are
 * overwritten with zeros too, not only freed cells (the database runs with FAST, above), so that
 * what `fn` deletes leaves no copy for a later write to reuse. The setting is restored after.
 */
export function withSecureDelete<T>(db: SqliteDatabase, fn: () => T): T {
  const before = db.pragma('secure_delete', { simple: true }) as number;
  db.pragma('secure_delete = ON');
  try {
    return fn();
  } finally {
    db.pragma(`secure_delete = ${SECURE_DELETE_SETTING[before] ?? 'FAST'}`);
  }
}

/**
 * Copies the whole WAL into the database file and truncates it, so that no frame keeps an old
 * page. False when another connection stood in the way (the checkpointer thread's own checkpoint,
 * a reader on an older snapshot): the WAL, and the old pages in the database file, may then still
 * hold what was just deleted, and the caller tries again later rather than count it done. It waits
 * for nobody (the busy timeout is 0 meanwhile): it runs on the thread that serves everything else.
 */
export function truncateWal(db: SqliteDatabase): boolean {
  const before = db.pragma('busy_timeout', { simple: true }) as number;
  db.pragma('busy_timeout = 0');
  try {
    const [row] = db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number }>;
    return row !== undefined && row.busy === 0;
  } finally {
    db.pragma(`busy_timeout = ${before}`);
  }
}
