/**
 * The SQLite store: the only module that knows SQL. One connection is the single
 * writer; better-sqlite3 is synchronous, so a transaction never interleaves.
 */
import { AppError } from '../core/app-error.js';
import type { AdminStore, SecretBox } from '../core/ports.js';
import { createSqliteAccountRepository } from './account-repository.js';
import { createSqliteChangeLog } from './change-log.js';
import { openDatabase } from './database.js';
import { createSqliteTenantRepository } from './tenant-repository.js';

export interface SqliteStore extends AdminStore {
  /** Schema versions applied while opening. */
  migrated: number[];
  /** Throws when the database cannot answer; used by readiness. */
  ping(): void;
  close(): void;
}

export function createSqliteStore(options: { path: string; secrets: SecretBox }): SqliteStore {
  const { db, migrated } = openDatabase({ path: options.path });
  const ping = db.prepare('SELECT 1');
  let closed = false;
  return {
    migrated,
    tenants: createSqliteTenantRepository(db, options.secrets),
    accounts: createSqliteAccountRepository(db, options.secrets),
    changes: createSqliteChangeLog(db),
    transaction: (fn) => {
      try {
        return db.transaction(fn).immediate();
      } catch (error) {
        throw asStoreError(error);
      }
    },
    ping: () => {
      ping.get();
    },
    close: () => {
      if (closed) return;
      closed = true;
      db.close();
    },
  };
}

/** SQLite codes that mean "cannot store right now": the caller may retry; nothing was written. */
const UNAVAILABLE = /^SQLITE_(FULL|BUSY|LOCKED|IOERR|READONLY|CANTOPEN|NOMEM)/;

function asStoreError(error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && UNAVAILABLE.test(code)) {
    return new AppError('STORE_UNAVAILABLE', 'the store cannot write right now; nothing was changed', {
      transient: true,
      details: { reason: code },
      cause: error,
    });
  }
  return error;
}
