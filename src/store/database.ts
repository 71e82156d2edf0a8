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
}

export function openDatabase(options: OpenDatabaseOptions): { db: SqliteDatabase; migrated: number[] } {
  mkdirSync(dirname(options.path), { recursive: true, mode: 0o700 });
  const db = new Database(options.path);
  try {
    db.pragma('journal_mode = WAL');
    // NORMAL in WAL mode is durable against process crashes (kill -9); FULL adds
    // an fsync per commit so that a power loss cannot drop an acknowledged message.
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
    const migrated = migrate(db, loadMigrations());
    return { db, migrated };
  } catch (error) {
    db.close();
    throw error;
  }
}
