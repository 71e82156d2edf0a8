/**
 * One daemon per data directory. Two on one directory would each reclaim the
 * other's leases at start and send the same message twice, so the daemon holds
 * a lock for its whole life: `daemon.lock` in the data directory, a SQLite
 * database held in exclusive locking mode with a write transaction open. The
 * lock is the kernel's (the POSIX advisory lock SQLite takes), so it goes with
 * the process however the process ends, SIGKILL included: no stale lock file
 * to clean after a crash.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';

export const LOCK_FILE = 'daemon.lock';

/** Another process holds the data directory (`code` is stable; the message says what to do). */
export class DataDirInUse extends Error {
  readonly code = 'DATA_DIR_IN_USE';

  constructor(readonly dataDir: string) {
    super(`data directory ${dataDir} is in use by another mailproxy: stop it first, or give this one another data_dir`);
    this.name = 'DataDirInUse';
  }
}

export interface DataDirLock {
  /** Idempotent. */
  release(): void;
}

/** Takes the data directory's lock at once, or throws DataDirInUse: it never waits for it. */
export function lockDataDir(dataDir: string): DataDirLock {
  const db = new Database(join(dataDir, LOCK_FILE), { timeout: 0 });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    // An exclusive transaction takes the file's exclusive lock now; in exclusive locking mode it is kept until the connection closes.
    db.exec('BEGIN EXCLUSIVE');
  } catch (error) {
    db.close();
    if ((error as { code?: unknown }).code === 'SQLITE_BUSY') throw new DataDirInUse(dataDir);
    throw error;
  }
  return {
    release() {
      if (db.open) db.close();
    },
  };
}
