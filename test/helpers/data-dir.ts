/**
 * A daemon's database read as another process would: through a read-only connection of its own,
 * closed after, seeing only what was committed.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';

export function readDatabase<T>(dataDir: string, read: (db: Database.Database) => T): T {
  const opened = new Database(join(dataDir, 'mailproxy.db'), { readonly: true });
  try {
    return read(opened);
  } finally {
    opened.close();
  }
}
