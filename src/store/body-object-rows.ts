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
       UNION ALL SELECT object FROM message_files WHERE object IN (SELECT value FROM json_each(@names))
       UNION ALL SELECT object FROM handed_objects WHERE object IN (SELECT value FROM json_each(@names))`,
    )
    .pluck();
  // Asked first with a read: a node alone never hands anything over, and an empty write would still wait for the
  // writer's lock (a backup or an operator's CLI holding it).
  const handedBefore = db.prepare<[number], number>(`SELECT 1 FROM handed_objects WHERE handed_at < ? LIMIT 1`).pluck();
  const forgetHanded = db.prepare<{ present: string; before: number }>(
    `DELETE FROM handed_objects WHERE handed_at < @before AND object NOT IN (SELECT value FROM json_each(@present))`,
  );
  const count = db.prepare<[], number>(`SELECT count(*) FROM object_removals`).pluck();
  const waiting = db
    .prepare<{ alone: number }, number>(
      `SELECT count(*) FROM messages WHERE body_object IS NOT NULL AND state IN ${PENDING_STATES_SQL}
        AND (@alone = 0 OR instr(body_object, '/') = 0)`,
    )
    .pluck();
  return {
    waiting: (written) => waiting.get({ alone: written === 'alone' ? 1 : 0 }) ?? 0,
    count: () => count.get() ?? 0,
    listed: (limit) => listed.all(limit),
    unnamed: (names) => {
      const kept = new Set(named.all({ names: JSON.stringify(names) }));
      return names.filter((name) => !kept.has(name));
    },
    forgetHandedGone: (present, before) => {
      if (handedBefore.get(before) !== undefined) forgetHanded.run({ present: JSON.stringify(present), before });
    },
    removed: (names) => {
      if (names.length > 0) removed.run(JSON.stringify(names));
    },
  };
}
