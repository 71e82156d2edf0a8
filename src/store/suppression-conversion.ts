/**
 * Suppressions a mailproxy from before migration 20 kept in clear (left aside by the
 * migration as suppressions_clear, which SQL could neither digest nor seal): each
 * becomes a sealed entry under its digest, as if added today with its own times, and
 * the clear table is dropped, in one transaction at the first open after the
 * migration (lists are small). Idempotent: once dropped there is nothing to do; a
 * stop midway rolls the whole back. secure_delete zeroes the pages the clear rows
 * leave and the WAL is truncated after, so no page of the file keeps them.
 */
import { addressDigests, type BlindIndex, type SecretBox } from '../core/index.js';
import type { SuppressionSource } from '../core/bounce/index.js';
import { durableTransaction, withSecureDelete, type SqliteDatabase } from './database.js';
import { sealedRow } from './suppression-repository.js';

interface ClearRow {
  tenant_id: string;
  address: string;
  reason: string | null;
  source: SuppressionSource;
  created_at: number;
  expires_at: number | null;
}

/** Converts and drops suppressions_clear when it is there; answers how many entries it sealed. */
export function sealClearSuppressions(db: SqliteDatabase, deps: { secrets: SecretBox; index: BlindIndex }): number {
  const pending = db
    .prepare<[], number>(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'suppressions_clear'`)
    .pluck()
    .get();
  if (pending === 0) return 0;
  return withSecureDelete(db, () => {
    const sealed = durableTransaction(db, () => {
      const rows = db.prepare<[], ClearRow>(`SELECT * FROM suppressions_clear`).all();
      const digests = addressDigests(
        deps.index,
        rows.map((row) => row.address),
      );
      // The same address could not be there twice (it was the key); conflicts change nothing.
      const insert = db.prepare(`INSERT INTO suppressions
          (tenant_id, address_digest, address_sealed, reason, source, created_at, expires_at)
        VALUES (@tenant_id, @address_digest, @address_sealed, @reason, @source, @created_at, @expires_at)
        ON CONFLICT (tenant_id, address_digest) DO NOTHING`);
      rows.forEach((row, at) => {
        const record = {
          tenantId: row.tenant_id,
          address: row.address,
          reason: row.reason,
          source: row.source,
          createdAt: row.created_at,
          expiresAt: row.expires_at,
        };
        insert.run(sealedRow(record, digests[at] ?? '', deps.secrets));
      });
      db.exec(`DROP TABLE suppressions_clear`);
      return rows.length;
    });
    db.pragma('wal_checkpoint(TRUNCATE)');
    return sealed;
  });
}
