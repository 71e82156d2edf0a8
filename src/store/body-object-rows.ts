/**
 * What the database knows of the body store's objects (migration 29): those no message needs any
 * more, listed by triggers in the statement that shredded, erased, replaced or deleted their
 * message and taken off the list once the store removed them; the objects messages name (their
 * bodies, and their offloaded attachments: migration 30); and the mail that still waits on one.
 */
import type { BodyObjectRows } from '../core/message/index.js';
import type { SqliteDatabase } from './database.js';
import { PENDING_STATES_SQL } from './tenant-repository.js';

export function createSqliteBodyObjectRows(db: SqliteDatabase): BodyObjectRows {
  const listed = db.prepare<[number], string>(`SELECT object FROM object_removals ORDER BY rowid LIMIT ?`).pluck();
  const removed = db.prepare<[string]>(`DELETE FROM object_removals WHERE object IN (SELECT value FROM json_each(?))`);
  const named = db
    .prepare<{ names: string }, string>(
      `SELECT body_object FROM messages WHERE body_object IN (SELECT value FROM json_each(@names))
       UNION ALL SELECT object FROM message_files WHERE object IN (SELECT value FROM json_each(@names))`,
    )
    .pluck();
  const count = db.prepare<[], number>(`SELECT count(*) FROM object_removals`).pluck();
  const waiting = db
    .prepare<[], number>(
      `SELECT count(*) FROM messages WHERE body_object IS NOT NULL AND state IN ${PENDING_STATES_SQL}`,
    )
    .pluck();
  return {
    waiting: () => waiting.get() ?? 0,
    count: () => count.get() ?? 0,
    listed: (limit) => listed.all(limit),
    unnamed: (names) => {
      const kept = new Set(named.all({ names: JSON.stringify(names) }));
      return names.filter((name) => !kept.has(name));
    },
    removed: (names) => {
      if (names.length > 0) removed.run(JSON.stringify(names));
    },
  };
}
