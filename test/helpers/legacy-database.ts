/**
 * A database as a mailproxy from before bodies were sealed left it: schema 16 (the
 * migrations up to it, applied as that version did), with bodies in clear in
 * messages.payload (HTTP) and messages.raw (SMTP), in the parts of a spool, and in a
 * PEC receipt's raw. Opening it with the current store migrates it; the body sealer
 * then finds these rows.
 */
import { createHash } from 'node:crypto';
import Database from 'better-sqlite3';
import { loadMigrations, migrate } from '../../src/store/migrations.js';

/** The schema version before migration 17 sealed bodies. */
export const LEGACY_SCHEMA = 16;

export interface LegacyDatabase {
  db: Database.Database;
  /** An HTTP submission, its MessagePayload JSON in clear; answers its pk. */
  payload(id: string, json: string, at?: number): number;
  /** An SMTP submission, its bytes in clear. */
  raw(id: string, bytes: Buffer, at?: number): number;
  /** A large SMTP submission, spooled in parts in clear. */
  spooled(id: string, parts: Buffer[], at?: number): number;
  /** A PEC receipt with its original bytes in clear (empty: a receipt an erasure emptied). */
  receipt(receiptId: string, bytes: Buffer): number;
  close(): void;
}

/** Opens `path` (a new file) at schema 16, with tenant `tenantId` and its account `main` on `relayPort`. */
export function createLegacyDatabase(
  path: string,
  options: { tenantId?: string; relayPort?: number; apiKeyHash?: string } = {},
): LegacyDatabase {
  const tenant = options.tenantId ?? 'acme';
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  migrate(db, loadMigrations().slice(0, LEGACY_SCHEMA));
  db.prepare(
    `INSERT INTO tenants (id, api_key_hash, api_key_created_at, created_at, updated_at) VALUES (?, ?, 0, 0, 0)`,
  ).run(tenant, options.apiKeyHash ?? `legacy-${tenant}`);
  db.prepare(
    `INSERT INTO accounts (tenant_id, id, host, port, tls_mode, is_default, created_at, updated_at)
     VALUES (?, 'main', '127.0.0.1', ?, 'none', 1, 0, 0)`,
  ).run(tenant, options.relayPort ?? 25);
  const insert = db.prepare<Record<string, unknown>>(
    `INSERT INTO messages (tenant_id, id, account_id, source, payload, raw, spool_id, mail_from, rcpt_to, subject,
       size_bytes, next_attempt_at, created_at, updated_at)
     VALUES (@tenant, @id, 'main', @source, @payload, @raw, @spool, 'sender@example.com', '["rcpt@example.net"]',
       @id, @size, @at, @at, @at)`,
  );
  const row = (id: string, fields: Record<string, unknown>, at: number) =>
    Number(insert.run({ tenant, id, payload: null, raw: null, spool: null, size: 0, at, ...fields }).lastInsertRowid);
  return {
    db,
    payload: (id, json, at = 0) => row(id, { source: 'http', payload: json, size: json.length }, at),
    raw: (id, bytes, at = 0) => row(id, { source: 'smtp', raw: bytes, size: bytes.length }, at),
    spooled(id, parts, at = 0) {
      const spool = Number(db.prepare(`INSERT INTO spools (created_at) VALUES (0)`).run().lastInsertRowid);
      parts.forEach((bytes, seq) =>
        db.prepare(`INSERT INTO spool_parts (spool_id, seq, bytes) VALUES (?, ?, ?)`).run(spool, seq, bytes),
      );
      const size = parts.reduce((sum, part) => sum + part.length, 0);
      return row(id, { source: 'smtp', spool, size }, at);
    },
    receipt(receiptId, bytes) {
      return Number(
        db
          .prepare(
            `INSERT INTO pec_receipts (receipt_id, tenant_id, account_id, mailbox, uid_validity, uid, received_at,
               receipt_type, recognised_by, size_bytes, complete, sha256, raw)
             VALUES (?, ?, 'main', 'INBOX', 1, ?, 0, 'accettazione', 'header', ?, 1, ?, ?)`,
          )
          .run(
            receiptId,
            tenant,
            Number(receiptId.replace(/\D/g, '') || 1),
            bytes.length,
            createHash('sha256').update(bytes).digest('hex'),
            bytes,
          ).lastInsertRowid,
      );
    },
    close: () => db.close(),
  };
}
