/**
 * Body retention (minimisation, issue 45): a final message's body is kept while it may be sent
 * again, then its data key is destroyed. Selected once its outcome was reported before `before`
 * (an outcome is reported after the message became final, so the message was final by then too),
 * through the index of messages whose body is kept; a batch at a time, so that intake never waits
 * long on the writer.
 */
import { withSecureDelete, type SqliteDatabase } from './database.js';
import { SHRED_BODY } from './stored-body.js';

/** The most bodies one call shreds: a transaction short enough that intake hardly waits behind it. */
export const SHRED_BATCH = 500;

/** Shreds one batch; answers how many (SHRED_BATCH: call again, after yielding). */
export function createBodyShredder(db: SqliteDatabase): (before: number, now: number) => number {
  const shred = db.prepare<{ before: number; now: number; limit: number }>(`UPDATE messages
    SET ${SHRED_BODY}, body_shredded_at = @now
    WHERE pk IN (SELECT pk FROM messages
      WHERE reported_at IS NOT NULL AND body_shredded_at IS NULL AND reported_at < @before AND state IN ('sent', 'error')
      LIMIT @limit)`);
  const batch = db.transaction((before: number, now: number) => shred.run({ before, now, limit: SHRED_BATCH }).changes);
  return (before, now) => batch.immediate(before, now);
}

/**
 * Removes one batch of sealed bytes whose key is gone (migration 22's `shredded_bodies`); answers
 * how many. A body written since under the same pk (a replaced message with a key again) stays.
 * Freed pages are zeroed, as the erasure's are.
 */
export function createShreddedBodyRemoval(db: SqliteDatabase): () => number {
  const remove = db.prepare<{ limit: number }>(`DELETE FROM message_bodies
    WHERE pk IN (SELECT pk FROM shredded_bodies ORDER BY pk LIMIT @limit)
      AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.pk = message_bodies.pk AND m.body_key IS NOT NULL)`);
  const listed = db.prepare<{ limit: number }>(
    `DELETE FROM shredded_bodies WHERE pk IN (SELECT pk FROM shredded_bodies ORDER BY pk LIMIT @limit)`,
  );
  const batch = db.transaction(() => {
    remove.run({ limit: SHRED_BATCH });
    return listed.run({ limit: SHRED_BATCH }).changes;
  });
  return () => withSecureDelete(db, () => batch.immediate());
}
