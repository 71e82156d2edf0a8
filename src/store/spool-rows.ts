/**
 * The SQLite side of a fleet node's replicated spool (issue 25): each waiting
 * message read as the entry the cluster keeps for it (the drain's transfer
 * record), and a returning node's surrender of what a survivor adopted.
 */
import type { SpoolRows } from '../core/cluster-spool.js';
import type { StoredTransfer } from '../core/fleet-drain.js';
import { durableTransaction, type SqliteDatabase } from './database.js';
import { IDENTITY_COLUMNS, transitionOf, type IdentityRow, type MessageEventWriter } from './message-event-writer.js';
import { TRANSFER_COLUMNS, transferReader, type TransferRow } from './message-transfer.js';

const WAITING = `state IN ('queued', 'deferred', 'sending')`;

export function createSqliteSpoolRows(db: SqliteDatabase, writeEvent: MessageEventWriter): SpoolRows {
  const asTransfer = transferReader(db);
  const byIds = db
    .prepare<[string, string], number>(`SELECT pk FROM messages WHERE tenant_id = ? AND id IN (SELECT value FROM json_each(?)) AND ${WAITING}`)
    .pluck();
  const byPks = db.prepare<[string], TransferRow>(`SELECT ${TRANSFER_COLUMNS} FROM messages WHERE pk IN (SELECT value FROM json_each(?)) AND ${WAITING}`);
  const waitingOf = db.prepare<[string], number>(`SELECT pk FROM messages WHERE pk IN (SELECT value FROM json_each(?)) AND ${WAITING}`).pluck();
  const waitingPks = db.prepare<[number, number], number>(`SELECT pk FROM messages WHERE pk > ? AND ${WAITING} ORDER BY pk LIMIT ?`).pluck();
  const allWaiting = db.prepare<[], { pk: number; tenant_id: string; id: string }>(`SELECT pk, tenant_id, id FROM messages WHERE ${WAITING} ORDER BY pk`);
  const waitingOne = db.prepare<[number], IdentityRow>(`SELECT ${IDENTITY_COLUMNS} FROM messages WHERE pk = ? AND ${WAITING}`);
  const remove = db.prepare<[number]>(`DELETE FROM messages WHERE pk = ?`);

  // A send in progress reads as waiting: if its node is lost, the adopter sends it again (at least once).
  const entry = (row: TransferRow): StoredTransfer => {
    const transfer = asTransfer(row);
    return transfer.state === 'queued' || transfer.state === 'deferred' ? transfer : { ...transfer, state: 'queued' };
  };

  return {
    waitingPksOf: (tenantId, ids) => (ids.length === 0 ? [] : byIds.all(tenantId, JSON.stringify(ids))),
    waitingOf: (pks) => new Set(pks.length === 0 ? [] : waitingOf.all(JSON.stringify(pks))),
    byPks(pks) {
      const found = new Map<number, StoredTransfer | null>(pks.map((pk) => [pk, null]));
      if (pks.length > 0) for (const row of byPks.all(JSON.stringify(pks))) found.set(row.pk, entry(row));
      return found;
    },
    waitingPks: (afterPk, limit) => waitingPks.all(afterPk, limit),
    waitingIds: () => allWaiting.all().map((row) => ({ pk: row.pk, tenantId: row.tenant_id, id: row.id })),
    surrender: (moves, now) =>
      durableTransaction(db, () => {
        let moved = 0;
        for (const { pk, toNode } of moves) {
          const row = waitingOne.get(pk);
          if (row === undefined) continue;
          // The message goes first, so that a full store gets its pages back before the event needs one.
          remove.run(pk);
          writeEvent(transitionOf(row, 'moved', now, { text: `adopted by node ${toNode} while this node was away`, data: { to_node: toNode } }));
          moved += 1;
        }
        return moved;
      }),
  };
}
