/**
 * The spool of large SMTP submissions (schema migration 3). Parts are written
 * in autocommit transactions without an fsync of their own: the message's
 * durable commit syncs the WAL, and with it every part written before.
 */
import type { MessageSpool } from '../core/message/index.js';
import type { SqliteDatabase } from './database.js';

export function createSqliteSpool(db: SqliteDatabase): MessageSpool {
  const insertSpool = db.prepare<[number]>(`INSERT INTO spools (created_at) VALUES (?)`);
  const insertPart = db.prepare<[number, number, Buffer]>(
    `INSERT INTO spool_parts (spool_id, seq, bytes) VALUES (?, ?, ?)`,
  );
  // The message row refers to its spool: a spool in use cannot be discarded by mistake.
  const remove = db.prepare<[number]>(
    `DELETE FROM spools WHERE id = ? AND NOT EXISTS (SELECT 1 FROM messages WHERE spool_id = spools.id)`,
  );
  const orphans = db.prepare<[number]>(
    `DELETE FROM spools WHERE created_at < ? AND NOT EXISTS (SELECT 1 FROM messages WHERE spool_id = spools.id)`,
  );

  return {
    open: (now) => Number(insertSpool.run(now).lastInsertRowid),
    append: (spoolId, seq, bytes) => {
      insertPart.run(
        spoolId,
        seq,
        Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
      );
    },
    discard: (spoolId) => {
      remove.run(spoolId);
    },
    sweep: (before) => orphans.run(before).changes,
  };
}
