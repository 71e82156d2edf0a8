/**
 * The SQLite side of a fleet drain: reading the waiting messages as
 * stored, inserting one adopted from a draining peer, and removing one that a
 * peer has adopted. Each change is one transaction with its timeline event.
 */
import { AppError } from '../core/index.js';
import type { MessageTransferStore, StoredTransfer } from '../core/fleet/index.js';
import { durableTransaction, type SqliteDatabase } from './database.js';
import { IDENTITY_COLUMNS, transitionOf, type IdentityRow, type MessageEventWriter } from './message-event-writer.js';

/** A message row as a transfer reads it (TRANSFER_COLUMNS). */
export interface TransferRow extends Omit<StoredTransfer, 'raw_base64' | 'origin_pk'> {
  pk: number;
  raw: Buffer | null;
  spool_id: number | null;
}

export const TRANSFER_COLUMNS = `pk, tenant_id, id, account_id, priority, batch_code, source, payload, raw, spool_id,
      mail_from, rcpt_to, subject, message_id_header, size_bytes, state, attempts, next_attempt_at, created_at, deferred_at, deferred_reason`;

/** A message's RFC 5322 bytes, null for an HTTP submission: a large SMTP submission's live in its spool, read back whole. */
export function rawReader(db: SqliteDatabase): (raw: Buffer | null, spoolId: number | null) => Buffer | null {
  const spoolParts = db
    .prepare<[number], Buffer>(`SELECT bytes FROM spool_parts WHERE spool_id = ? ORDER BY seq`)
    .pluck();
  return (raw, spoolId) => (spoolId === null ? raw : Buffer.concat(spoolParts.all(spoolId)));
}

/** The row as it travels, its bytes (if any) in base64. */
export function transferReader(db: SqliteDatabase): (row: TransferRow) => StoredTransfer {
  const rawOf = rawReader(db);
  return ({ pk, raw, spool_id: spoolId, ...row }) => {
    const bytes = rawOf(raw, spoolId);
    return { ...row, origin_pk: pk, raw_base64: bytes === null ? null : bytes.toString('base64') };
  };
}

// Held when the tenant is inactive or its batch (or all of it) suspended on this node: a suspension is this node's configuration.
const HOLD = `(SELECT active = 0 FROM tenants WHERE id = @tenant_id)
  OR EXISTS (SELECT 1 FROM suspensions s WHERE s.tenant_id = @tenant_id AND s.batch_code IN ('*', @batch_code))`;

export function createSqliteMessageTransfer(db: SqliteDatabase, writeEvent: MessageEventWriter): MessageTransferStore {
  const waitingRows = db.prepare<[number], TransferRow>(`SELECT ${TRANSFER_COLUMNS}
    FROM messages WHERE state IN ('queued', 'deferred') AND lease_owner IS NULL ORDER BY pk LIMIT ?`);
  const asTransfer = transferReader(db);
  const countWaiting = db
    .prepare<[], number>(`SELECT count(*) FROM messages WHERE state IN ('queued', 'deferred', 'sending')`)
    .pluck();
  const accountExists = db
    .prepare<[string, string], number>(`SELECT 1 FROM accounts WHERE tenant_id = ? AND id = ?`)
    .pluck();
  const existing = db.prepare<[string, string], { pk: number }>(
    `SELECT pk FROM messages WHERE tenant_id = ? AND id = ?`,
  );
  const insert = db.prepare<
    Record<string, unknown>,
    IdentityRow
  >(`INSERT INTO messages (tenant_id, id, account_id, priority, batch_code, source,
      payload, raw, mail_from, rcpt_to, subject, message_id_header, size_bytes, state, suspended, attempts, next_attempt_at,
      deferred_at, deferred_reason, created_at, updated_at)
    VALUES (@tenant_id, @id, @account_id, @priority, @batch_code, @source, @payload, @raw, @mail_from, @rcpt_to, @subject, @message_id_header,
      @size_bytes, @state, CASE WHEN ${HOLD} THEN 1 ELSE 0 END, @attempts, @next_attempt_at, @deferred_at, @deferred_reason, @created_at, @now)
    RETURNING ${IDENTITY_COLUMNS}`);
  const identity = db.prepare<
    [number],
    IdentityRow
  >(`SELECT ${IDENTITY_COLUMNS} FROM messages WHERE pk = ? AND state IN ('queued', 'deferred')
    AND lease_owner IS NULL`);
  const remove = db.prepare<[number]>(`DELETE FROM messages WHERE pk = ?`);

  return {
    waiting: (limit) => waitingRows.all(limit).map(asTransfer),
    waitingCount: () => countWaiting.get() ?? 0,
    adopt: (transfer, dueAt, now) =>
      durableTransaction(db, () => {
        // The same client id already here: an adopt retried after its reply was lost.
        const found = existing.get(transfer.tenant_id, transfer.id);
        if (found !== undefined) return { pk: found.pk, already: true };
        // A message this node could not send: the draining node offers it to another peer.
        if (accountExists.get(transfer.tenant_id, transfer.account_id) === undefined)
          throw new AppError('NOT_FOUND', `account ${transfer.tenant_id}/${transfer.account_id} is not on this node`);
        const { origin_node: from, origin_pk: originPk, raw_base64: rawBase64, ...columns } = transfer;
        const row = insert.get({
          ...columns,
          raw: rawBase64 === null ? null : Buffer.from(rawBase64, 'base64'),
          next_attempt_at: dueAt,
          now,
        }) as IdentityRow;
        writeEvent(
          transitionOf(row, 'adopted', now, {
            text: `moved here from node ${from}`,
            data: { from_node: from, origin_pk: originPk },
          }),
        );
        return { pk: row.pk, already: false };
      }),
    moved: (originPk, toNode, peerPk, now) =>
      durableTransaction(db, () => {
        const row = identity.get(originPk);
        if (row === undefined) return false;
        // The message goes first, so that a full store gets its pages back before the event needs one.
        remove.run(originPk);
        writeEvent(
          transitionOf(row, 'moved', now, {
            text: `moved to node ${toNode}`,
            data: { to_node: toNode, peer_pk: peerPk },
          }),
        );
        return true;
      }),
  };
}
