/**
 * The store's writes as an operator sees them in GET /status. A full or locked
 * database otherwise shows only as refused requests (503 STORE_UNAVAILABLE over
 * HTTP, 451 4.3.0 over SMTP): here is whether writes are being refused now,
 * what failed last and when, and how full the database is against its cap.
 */
import type { SqliteDatabase } from './database.js';

export interface StoreWriteStatus {
  /** `refusing` from a refused write until the next commit succeeds. */
  state: 'ok' | 'refusing';
  last_error: { reason: string; at_ts: number } | null;
  /** Pages in use (the free list excluded: SQLite reuses those first) times the page size. */
  used_bytes: number;
  /** `max_database_mb`, as SQLite enforces it; null when uncapped. */
  max_bytes: number | null;
}

export interface StoreWriteHealth {
  failed(reason: string): void;
  succeeded(): void;
  status(): StoreWriteStatus;
}

export function createStoreWriteHealth(db: SqliteDatabase, now: () => number, capped: boolean): StoreWriteHealth {
  let refusing = false;
  let lastError: { reason: string; at: number } | null = null;
  const pragma = (name: string): number => db.pragma(name, { simple: true }) as number;
  return {
    failed(reason) {
      refusing = true;
      lastError = { reason, at: now() };
    },
    succeeded() {
      refusing = false;
    },
    status() {
      const pageSize = pragma('page_size');
      return {
        state: refusing ? 'refusing' : 'ok',
        last_error: lastError === null ? null : { reason: lastError.reason, at_ts: Math.floor(lastError.at / 1000) },
        used_bytes: (pragma('page_count') - pragma('freelist_count')) * pageSize,
        max_bytes: capped ? pragma('max_page_count') * pageSize : null,
      };
    },
  };
}
