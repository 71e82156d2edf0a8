/**
 * The spool of large SMTP submissions (schema migration 3). Parts are written
 * in autocommit transactions without an fsync of their own: the message's
 * durable commit syncs the WAL, and with it every part written before.
 *
 * Each spool has a data key of its own (migration 17), and each part is sealed
 * under it as it arrives: the key in clear lives only in memory here until the
 * message takes the spool (or it is discarded), never on disk.
 */
import type { BodySeal, MessageSpool } from '../core/message/index.js';
import type { SqliteDatabase } from './database.js';
import { newDataKeys, type NewDataKey } from './stored-body.js';

/** The data keys of spools being written, in clear until their message takes them. */
export interface SpoolKeys {
  /** The message row now names the spool: its parts are complete. */
  taken(spoolId: number): void;
}

export function createSqliteSpool(db: SqliteDatabase, seal: BodySeal): MessageSpool & SpoolKeys {
  const newKey = newDataKeys(db, seal);
  const insertSpool = db.prepare<[number, number]>(`INSERT INTO spools (created_at, key_id) VALUES (?, ?)`);
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
  const open = new Map<number, { key: NewDataKey; at: number }>();

  return {
    open: (now, tenantId) => {
      const { key, spoolId } = db.transaction(() => {
        const made = newKey(tenantId, now);
        return { key: made, spoolId: Number(insertSpool.run(now, made.keyId).lastInsertRowid) };
      })();
      open.set(spoolId, { key, at: now });
      return spoolId;
    },
    append: (spoolId, seq, bytes) => {
      const spool = open.get(spoolId);
      if (spool === undefined) throw new Error(`spool ${spoolId} is not open for writing`);
      insertPart.run(spoolId, seq, spool.key.seal(seq, bytes));
    },
    taken: (spoolId) => {
      open.delete(spoolId);
    },
    discard: (spoolId) => {
      open.delete(spoolId);
      remove.run(spoolId);
    },
    sweep: (before) => {
      for (const [spoolId, spool] of open) if (spool.at < before) open.delete(spoolId);
      return orphans.run(before).changes;
    },
  };
}
