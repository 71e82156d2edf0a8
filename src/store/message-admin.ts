/** SQLite side of the operator commands on messages (suspend, activate, delete, resend, retry-now, cleanup) and the message read model. */
import type { BodySeal, IdsOutcome, MessageAdmin } from '../core/message/index.js';
import { createBodyShredder, createShreddedBodyRemoval } from './body-retention.js';
import { transactionRunner, type SqliteDatabase } from './database.js';
import type { PecReceipts } from './pec-receipts.js';
import { IDENTITY_COLUMNS, transitionOf, type IdentityRow, type MessageEventWriter } from './message-event-writer.js';
import { EVENT_KEY_COLUMN, eventFieldOpener, openRefused } from './event-fields.js';
import { personalOpener } from './personal-fields.js';
import { toDetail, toTimelineEvent, type DetailRow, type EventRow } from './message-rows.js';
import { PENDING_STATES_SQL } from './tenant-repository.js';

// A waiting message is held when its tenant is inactive or suspended as a whole, or its batch is suspended.
const HOLD = `(SELECT active = 0 FROM tenants WHERE id = messages.tenant_id)
  OR EXISTS (SELECT 1 FROM suspensions s WHERE s.tenant_id = messages.tenant_id AND s.batch_code IN ('*', messages.batch_code))`;

// Waiting, spelled with the pending index's own predicate so that SQLite uses that index.
const WAITING = `state IN ${PENDING_STATES_SQL} AND state <> 'sending'`;

type Holds = Pick<MessageAdmin, 'suspend' | 'activate' | 'refreshHolds' | 'suspensions'>;
type PerIdCommands = Pick<MessageAdmin, 'deleteMessages' | 'resend' | 'retryNow'>;

/** Suspensions and the holds they put on waiting messages. */
function createHolds(db: SqliteDatabase, writeEvent: MessageEventWriter): Holds {
  const inTransaction = transactionRunner(db);
  const addSuspension = db.prepare(
    `INSERT OR IGNORE INTO suspensions (tenant_id, batch_code, created_at) VALUES (?, ?, ?)`,
  );
  const removeOne = db.prepare(`DELETE FROM suspensions WHERE tenant_id = ? AND batch_code = ?`);
  const removeAll = db.prepare(`DELETE FROM suspensions WHERE tenant_id = ?`);
  const refresh = db.prepare<[string], IdentityRow & { suspended: number }>(
    `UPDATE messages SET suspended = CASE WHEN ${HOLD} THEN 1 ELSE 0 END
    WHERE tenant_id = ? AND ${WAITING} AND suspended <> CASE WHEN ${HOLD} THEN 1 ELSE 0 END
    RETURNING ${IDENTITY_COLUMNS}, suspended`,
  );
  const listSuspensions = db
    .prepare<[string], string>(`SELECT batch_code FROM suspensions WHERE tenant_id = ? ORDER BY batch_code`)
    .pluck();

  /** Re-derives the holds; each message held or released is a transition of its own. Answers how many changed. */
  const rehold = (tenantId: string, at: number): number => {
    const changed = refresh.all(tenantId);
    for (const row of changed) {
      writeEvent(transitionOf(row, row.suspended === 1 ? 'suspended' : 'activated', at));
    }
    return changed.length;
  };
  const held = (tenantId: string, at: number, change: () => void): number => {
    change();
    return rehold(tenantId, at);
  };

  return {
    suspend: (tenantId, batchCode, at) =>
      inTransaction(() => held(tenantId, at, () => addSuspension.run(tenantId, batchCode, at)), 'immediate'),
    activate: (tenantId, batchCode, at) =>
      inTransaction(
        () =>
          held(tenantId, at, () => (batchCode === '*' ? removeAll.run(tenantId) : removeOne.run(tenantId, batchCode))),
        'immediate',
      ),
    refreshHolds: (tenantId, at) => {
      rehold(tenantId, at);
    },
    suspensions: (tenantId) => listSuspensions.all(tenantId),
  };
}

/** Runs a command on each id in one transaction: not found, done (`act` answers true), gone (its body) or skipped. */
function perIdRunner(db: SqliteDatabase) {
  const inTransaction = transactionRunner(db);
  const stateOf = db.prepare<[string, string], { pk: number; state: string }>(
    `SELECT pk, state FROM messages WHERE tenant_id = ? AND id = ?`,
  );
  return (
    ids: readonly string[],
    tenantId: string,
    act: (row: { pk: number; state: string }) => boolean | 'gone',
  ): IdsOutcome =>
    inTransaction(() => {
      const outcome: Required<IdsOutcome> = { done: [], notFound: [], skipped: [], gone: [] };
      for (const id of ids) {
        const row = stateOf.get(tenantId, id);
        const acted = row === undefined ? undefined : act(row);
        if (acted === undefined) outcome.notFound.push(id);
        else if (acted === 'gone') outcome.gone.push(id);
        else if (acted) outcome.done.push(id);
        else outcome.skipped.push(id);
      }
      return outcome;
    }, 'immediate');
}

/** The commands that name messages by client id: delete, resend, retry now. */
function createPerIdCommands(db: SqliteDatabase, writeEvent: MessageEventWriter): PerIdCommands {
  const identity = db.prepare<[number], IdentityRow>(`SELECT ${IDENTITY_COLUMNS} FROM messages WHERE pk = ?`);
  const deleteOne = db.prepare(`DELETE FROM messages WHERE pk = ?`);
  // The `deleted` event outlives its message only until the mirror has it (at once when the mirror is off).
  const dropPassedDeletion = db.prepare(`DELETE FROM outbox WHERE message_pk = ? AND event_type = 'message.deleted'
    AND seq <= (SELECT cursor_seq FROM mirror_state WHERE id = 1)`);
  const requeue = db.prepare<[{ at: number; pk: number }], IdentityRow>(`UPDATE messages
    SET state = 'queued', next_attempt_at = @at, sent_at = NULL, error_at = NULL, error = NULL, deferred_at = NULL, deferred_reason = NULL,
      reported_at = NULL, refused_recipients = NULL, updated_at = @at,
      -- Through a PEC account a resend is a new certified transmission, proved by receipts of its own (the
      -- earlier ones stay in pec_receipts and the timeline).
      pec_rda_at = NULL, pec_rdc_at = NULL, pec_error = NULL, pec_error_at = NULL, pec_awaiting_since = NULL
    WHERE pk = @pk AND state IN ('sent', 'error') AND body_shredded_at IS NULL RETURNING ${IDENTITY_COLUMNS}`);
  const shredded = db
    .prepare<[number], number>(`SELECT body_shredded_at IS NOT NULL FROM messages WHERE pk = ?`)
    .pluck();
  // Only a message waiting for a later attempt: held ones wait for their activation, not for a time.
  const advance = db.prepare<[{ at: number; pk: number }], IdentityRow>(`UPDATE messages
    SET state = 'queued', next_attempt_at = @at, updated_at = @at
    WHERE pk = @pk AND state IN ('queued', 'deferred') AND suspended = 0 AND next_attempt_at > @at
    RETURNING ${IDENTITY_COLUMNS}`);
  const nextAttemptOf = db.prepare<[number], number>(`SELECT next_attempt_at FROM messages WHERE pk = ?`).pluck();

  const perId = perIdRunner(db);

  return {
    // A message in flight cannot be recalled from the relay: it is left alone and reported as skipped.
    // Each deletion is a transition of its own on the stream. The message goes first, so that a
    // full store gets its pages back before the event needs one.
    deleteMessages: (tenantId, ids, at) =>
      perId(ids, tenantId, (row) => {
        const gone = row.state === 'sending' ? undefined : identity.get(row.pk);
        if (gone === undefined || deleteOne.run(row.pk).changes !== 1) return false;
        writeEvent(transitionOf(gone, 'deleted', at));
        dropPassedDeletion.run(gone.pk);
        return true;
      }),
    resend: (tenantId, ids, at, correlationId) =>
      perId(ids, tenantId, (row) => {
        const moved = requeue.get({ at, pk: row.pk });
        // Nothing left to send: its body was shredded by retention or erased.
        if (moved === undefined) return shredded.get(row.pk) === 1 ? 'gone' : false;
        writeEvent(transitionOf(moved, 'resent', at, { correlationId }));
        return true;
      }),
    retryNow: (tenantId, ids, at, correlationId) =>
      perId(ids, tenantId, (row) => {
        const wasDueAt = nextAttemptOf.get(row.pk);
        const moved = advance.get({ at, pk: row.pk });
        if (moved === undefined) return false;
        const text = 'an operator asked for the next attempt now';
        writeEvent(
          transitionOf(moved, 'retry_now', at, {
            correlationId,
            text,
            data: { was_due_ts: Math.floor((wasDueAt ?? at) / 1000) },
          }),
        );
        return true;
      }),
  };
}

/** `receipts`: the store's PEC receipts, whose list the message detail carries. */
export function createSqliteMessageAdmin(
  db: SqliteDatabase,
  writeEvent: MessageEventWriter,
  receipts: Pick<PecReceipts, 'ofMessage'>,
  seal: BodySeal,
): MessageAdmin {
  const open = personalOpener(seal);
  const openEvent = eventFieldOpener(seal);
  const removeReportedAll = db.prepare(`DELETE FROM messages WHERE reported_at IS NOT NULL AND reported_at < ?
    AND (bounce_at IS NULL OR bounce_reported_at IS NOT NULL)`);
  const removeReportedTenant =
    db.prepare(`DELETE FROM messages WHERE tenant_id = ? AND reported_at IS NOT NULL AND reported_at < ?
    AND (bounce_at IS NULL OR bounce_reported_at IS NOT NULL)`);
  const detailRow = db.prepare<[string, string], DetailRow>(`SELECT * FROM messages WHERE tenant_id = ? AND id = ?`);
  const eventRows = db.prepare<
    [number],
    EventRow
  >(`SELECT id, tenant_id, event_type, occurred_at, attempt, reply_code, enhanced_status, text, payload AS data,
      ${EVENT_KEY_COLUMN}
    FROM outbox WHERE message_pk = ? ORDER BY seq`);

  return {
    ...createHolds(db, writeEvent),
    ...createPerIdCommands(db, writeEvent),
    shredBodies: createBodyShredder(db),
    removeShreddedBodies: createShreddedBodyRemoval(db),
    removeReported: (tenantId, before) =>
      (tenantId === null ? removeReportedAll.run(before) : removeReportedTenant.run(tenantId, before)).changes,
    detail: (tenantId, id) => {
      const row = detailRow.get(tenantId, id);
      if (row === undefined) return null;
      return {
        message: toDetail(row, open(row), openRefused(seal, row)),
        events: eventRows.all(row.pk).map((event) => toTimelineEvent(event, openEvent)),
        pecReceipts: receipts.ofMessage(row.pk),
      };
    },
  };
}
