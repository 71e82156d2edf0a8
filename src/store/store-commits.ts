/**
 * How the store commits and refuses: the durable transaction, the group commit
 * (committed at NORMAL, answered once a shared fsync of the WAL holds it), and
 * SQLite's "cannot store right now" errors as STORE_UNAVAILABLE, counted in the
 * write health the operator sees.
 */
import { AppError } from '../core/index.js';
import { durableTransaction, transactionRunner, type SqliteDatabase } from './database.js';
import { createWalSync } from './wal-sync.js';
import { createStoreWriteHealth, type StoreWriteStatus } from './write-health.js';

interface StoreCommitsOptions {
  path: string;
  now: () => number;
  maxBytes?: number;
}

export interface StoreCommits {
  /** `target` with every method's "cannot store" errors as STORE_UNAVAILABLE. */
  guard<T extends object>(target: T): T;
  transaction<T>(fn: () => T): T;
  commitGroup<T>(fn: () => T): Promise<T>;
  writeStatus(): StoreWriteStatus;
  close(): void;
}

export function createStoreCommits(db: SqliteDatabase, options: StoreCommitsOptions): StoreCommits {
  const walSync = createWalSync(`${options.path}-wal`);
  const inTransaction = transactionRunner(db);
  const health = createStoreWriteHealth(db, options.now, options.maxBytes !== undefined && options.maxBytes > 0);
  const asError = (error: unknown): unknown => {
    const mapped = asStoreError(error);
    if (mapped !== error) health.failed((error as { code: string }).code);
    return mapped;
  };
  /** Group commit: committed at NORMAL now, answered once an fsync of the WAL (shared by the callers meanwhile) holds it. */
  const commitGroup = async <T>(fn: () => T): Promise<T> => {
    let result;
    try {
      // synchronous = NORMAL: frames written now, synced below off this thread.
      result = inTransaction(fn, 'immediate');
    } catch (error) {
      throw asError(error);
    }
    try {
      await walSync.sync();
      health.succeeded();
    } catch (error) {
      health.failed((error as { code?: string }).code ?? 'EIO');
      throw new AppError('STORE_UNAVAILABLE', 'the commit could not be synced to disk', {
        transient: true,
        details: { reason: (error as { code?: string }).code ?? 'EIO' },
        cause: error,
      });
    }
    return result;
  };
  return {
    guard: (target) => storeErrors(target, asError),
    transaction: (fn) => {
      try {
        const result = durableTransaction(db, fn);
        health.succeeded();
        return result;
      } catch (error) {
        throw asError(error);
      }
    },
    commitGroup,
    writeStatus: () => health.status(),
    close: () => walSync.close(),
  };
}

/** SQLite codes that mean "cannot store right now": the caller may retry; nothing was written. */
const UNAVAILABLE = /^SQLITE_(FULL|BUSY|LOCKED|IOERR|READONLY|CANTOPEN|NOMEM|ABORT_ROLLBACK)/;

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

/** Every method of `target`, with SQLite's "cannot store" errors as STORE_UNAVAILABLE (by `asError`). */
function storeErrors<T extends object>(target: T, asError: (error: unknown) => unknown): T {
  const wrapped = {} as Record<string, unknown>;
  for (const [name, value] of Object.entries(target)) {
    wrapped[name] =
      typeof value === 'function'
        ? (...args: unknown[]) => {
            try {
              return (value as (...a: unknown[]) => unknown)(...args);
            } catch (error) {
              throw asError(error);
            }
          }
        : value;
  }
  return wrapped as T;
}
