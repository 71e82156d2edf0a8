/**
 * The SQLite queue: enqueue, claim with a lease, record outcomes, reclaim
 * expired leases, account usage. The current time is always a bound parameter.
 */
import type { HandoffState, MessageQueue } from '../core/message/index.js';
import type { SqliteDatabase } from './database.js';
import { createEnqueue, type BodySealing } from './message-enqueue.js';
import { IDENTITY_COLUMNS, transitionOf, type IdentityRow, type MessageEventWriter } from './message-event-writer.js';
import { createOutcomeRecorder } from './message-outcomes.js';
import { createClaims } from './message-claims.js';
import { spoolReader } from './stored-body.js';

const WAITING = `state IN ('queued', 'deferred') AND suspended = 0`;

/** Gives leased messages back to the queue: expired leases (a crash, another node's) and this node's own at stop. */
function createLeaseRecovery(db: SqliteDatabase, writeEvent: MessageEventWriter) {
  const expired = db.prepare<[{ now: number; owner: string; others: number; held: string }], IdentityRow>(
    `UPDATE messages SET state = 'queued', lease_owner = NULL, lease_expires_at = NULL
     WHERE state = 'sending' AND (lease_expires_at <= @now OR (@others = 1 AND lease_owner <> @owner))
       AND pk NOT IN (SELECT value FROM json_each(@held))
     RETURNING ${IDENTITY_COLUMNS}`,
  );
  const owned = db.prepare<[{ owner: string }], IdentityRow>(
    `UPDATE messages SET state = 'queued', lease_owner = NULL, lease_expires_at = NULL
     WHERE state = 'sending' AND lease_owner = @owner RETURNING ${IDENTITY_COLUMNS}`,
  );

  const reclaim = db.transaction(
    (now: number, owner: string, otherOwnersToo: boolean, held: readonly number[]): number => {
      const rows = expired.all({ now, owner, others: otherOwnersToo ? 1 : 0, held: JSON.stringify(held) });
      for (const row of rows) {
        writeEvent(
          transitionOf(row, 'lease_expired', now, {
            text: 'the send was interrupted; it will be retried with the same X-Genro-Mail-ID',
          }),
        );
      }
      return rows.length;
    },
  );

  const handBack = db.transaction((owner: string, now: number): number => {
    const rows = owned.all({ owner });
    for (const row of rows) {
      writeEvent(
        transitionOf(row, 'lease_expired', now, {
          text: 'the daemon stopped before the relay answered; it will be retried with the same X-Genro-Mail-ID',
        }),
      );
    }
    return rows.length;
  });

  return { reclaim, handBack };
}

/** What intake and delivery look up beside the queue: client ids' states, erased messages, spooled bytes. */
function createQueueLookups(db: SqliteDatabase): Pick<MessageQueue, 'states' | 'spooledContent' | 'erasedOf'> {
  const erasedRows = db
    .prepare<[string], number>(
      `SELECT pk FROM messages WHERE pk IN (SELECT value FROM json_each(?)) AND erased_at IS NOT NULL`,
    )
    .pluck();
  const spooled = spoolReader(db);
  const stateRows = db.prepare<[string, string], { id: string; state: HandoffState }>(
    `SELECT id, state FROM messages WHERE tenant_id = ? AND id IN (SELECT value FROM json_each(?))`,
  );

  return {
    states: (tenantId, clientIds) =>
      new Map(stateRows.all(tenantId, JSON.stringify(clientIds)).map((row) => [row.id, row.state])),
    spooledContent: spooled,
    erasedOf: (pks) => new Set(pks.length === 0 ? [] : erasedRows.all(JSON.stringify(pks))),
  };
}

export function createSqliteMessageQueue(
  db: SqliteDatabase,
  writeEvent: MessageEventWriter,
  bodies: BodySealing,
  /** The suppression list's lookup (suppression-repository.ts): it matches by digest. */
  suppressed: MessageQueue['suppressed'],
): MessageQueue {
  const claims = createClaims(db, writeEvent, bodies.seal, WAITING);
  const recovery = createLeaseRecovery(db, writeEvent);
  const pause = db.prepare(`UPDATE accounts SET paused_at = ?, paused_reason = ? WHERE tenant_id = ? AND id = ?`);

  return {
    ...createQueueLookups(db),
    suppressed,
    enqueue: createEnqueue(db, writeEvent, bodies),
    claim: (request) => claims.claim.immediate(request),
    record: createOutcomeRecorder(db, writeEvent, bodies.seal),
    reclaimLeases: (now, owner, otherOwnersToo, held = []) =>
      recovery.reclaim.immediate(now, owner, otherOwnersToo, held),
    handBack: (owner, now) => recovery.handBack.immediate(owner, now),
    nextDueAt: claims.nextDueAt,
    usage: claims.usage,
    destinationUsage: claims.destinationUsage,
    pauseAccount: (tenantId, accountId, at, reason) => {
      pause.run(at, reason, tenantId, accountId);
    },
  };
}
