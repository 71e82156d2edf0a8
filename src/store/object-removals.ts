/**
 * The body store's objects that no message needs any more (migration 29): listed by triggers in
 * the statement that shredded, erased, replaced or deleted their message, and taken off the list
 * once the store removed them.
 */
import type { ObjectRemovals } from '../core/message/index.js';
import type { SqliteDatabase } from './database.js';
import { PENDING_STATES_SQL } from './tenant-repository.js';

export function createSqliteObjectRemovals(db: SqliteDatabase): ObjectRemovals {
  const listed = db.prepare<[number], string>(`SELECT object FROM object_removals ORDER BY rowid LIMIT ?`).pluck();
  const removed = db.prepare<[string]>(`DELETE FROM object_removals WHERE object IN (SELECT value FROM json_each(?))`);
  const named = db
    .prepare<[string], string>(`SELECT body_object FROM messages WHERE body_object IN (SELECT value FROM json_each(?))`)
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
      const kept = new Set(named.all(JSON.stringify(names)));
      return names.filter((name) => !kept.has(name));
    },
    removed: (names) => {
      if (names.length > 0) removed.run(JSON.stringify(names));
    },
  };
}
