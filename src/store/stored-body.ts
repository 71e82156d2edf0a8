/**
 * Reading a message's body back as stored (migration 17): sealed under its data
 * key, or in clear in a row written before bodies were sealed (until the sealer
 * reaches it). A key that is gone reads as an empty one: the body was shredded.
 */
import type { BodySeal } from '../core/message/index.js';
import type { SqliteDatabase } from './database.js';

/** The wrapped key of `key_id` in a query on messages or spools: null when none, empty when shredded. */
export const keyOf = (column: string): string =>
  `CASE WHEN ${column} IS NULL THEN NULL ELSE coalesce((SELECT wrapped FROM data_keys WHERE id = ${column}), X'') END`;

/** A message's sealed body, in a query on messages (migration 22). */
export const SEALED_BODY = '(SELECT b.body FROM message_bodies b WHERE b.pk = messages.pk)';

/**
 * A message's body and its wrapped key, as ClaimedMessage has them: sealed beside its row (migration
 * 22), in clear from before sealing, or in a spool. A message with no body at all (erased, or
 * shredded by retention) reads as shredded too: never as an empty body in clear, nor as the sealed
 * bytes that wait for removal after their key was destroyed.
 */
export const BODY_COLUMNS = `CASE WHEN body_key IS NOT NULL THEN ${SEALED_BODY}
    ELSE coalesce(raw, CAST(payload AS BLOB)) END AS body,
  CASE WHEN body_key IS NOT NULL THEN body_key
    WHEN raw IS NULL AND payload IS NULL AND spool_id IS NULL THEN X'' END AS key`;

/**
 * The assignments that shred a message's body (retention, erasure): its clear bytes go, its key is
 * destroyed (the sealed bytes are listed for removal: migration 22's trigger, and its object in the
 * body store: migration 29's), and clearing spool_id destroys its spool with the spool's key
 * (migration 17's triggers).
 */
export const SHRED_BODY = 'payload = NULL, raw = NULL, body_key = NULL, spool_id = NULL, body_object = NULL';

/** Writes a message's sealed body beside its row; a replacement's takes the place of the one before. */
export function messageBodyWriter(db: SqliteDatabase): (pk: number, sealed: Uint8Array) => void {
  const put = db.prepare<[number, Uint8Array]>(`INSERT OR REPLACE INTO message_bodies (pk, body) VALUES (?, ?)`);
  return (pk, sealed) => void put.run(pk, sealed);
}

/** Reads a spool's parts in order, and their key. */
export function spoolReader(db: SqliteDatabase): (spoolId: number) => { key: Buffer | null; parts: Buffer[] } {
  const parts = db.prepare<[number], Buffer>(`SELECT bytes FROM spool_parts WHERE spool_id = ? ORDER BY seq`).pluck();
  const key = db.prepare<[number], Buffer | null>(`SELECT ${keyOf('key_id')} FROM spools WHERE id = ?`).pluck();
  // A spool that is gone (its message erased since it was claimed) reads as shredded, never as an
  // empty body in clear; one without a key holds a body written before bodies were sealed.
  return (spoolId) => {
    const found = key.get(spoolId);
    return { key: found === undefined ? Buffer.alloc(0) : found, parts: parts.all(spoolId) };
  };
}

/** Opens what was read: null when the body was shredded. */
export function openStored(
  seal: BodySeal,
  tenantId: string,
  stored: { key: Buffer | null; parts: Buffer[] },
): Buffer | null {
  if (stored.key === null) return Buffer.concat(stored.parts);
  if (stored.key.length === 0) return null;
  return seal.open({ tenantId, key: stored.key, parts: stored.parts });
}

/** The bytes as a Buffer over the same memory (a thread's transfer gives a plain Uint8Array). */
export const asBuffer = (bytes: Uint8Array): Buffer =>
  Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** Stores a wrapped data key of `tenantId` (migration 17); answers its id. */
export function dataKeyWriter(db: SqliteDatabase): (tenantId: string, wrapped: Uint8Array, now: number) => number {
  const insert = db.prepare<[string, Uint8Array, number]>(
    `INSERT INTO data_keys (tenant_id, wrapped, created_at) VALUES (?, ?, ?)`,
  );
  return (tenantId, wrapped, now) => Number(insert.run(tenantId, wrapped, now).lastInsertRowid);
}

/** A body's data key, new and stored: its id, and its body's parts sealed under it. */
export interface NewDataKey {
  keyId: number;
  seal(part: number, bytes: Uint8Array): Buffer;
}

/** Makes a new data key for a body of `tenantId` and stores it wrapped; the key in clear stays in the answer's closure. */
export function newDataKeys(db: SqliteDatabase, seal: BodySeal): (tenantId: string, now: number) => NewDataKey {
  const store = dataKeyWriter(db);
  return (tenantId, now) => {
    const key = seal.newKey();
    return { keyId: store(tenantId, key.wrapped, now), seal: (part, bytes) => seal.seal(key, tenantId, part, bytes) };
  };
}
