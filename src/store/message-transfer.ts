/**
 * The SQLite side of a fleet drain: reading the waiting messages as
 * stored, inserting one adopted from a draining peer, and removing one that a
 * peer has adopted. Each change is one transaction with its timeline event.
 */
import { AppError } from '../core/index.js';
import type {
  MessageTransfer,
  MessageTransferStore,
  PersonalTransfer,
  SealedTransfer,
  StoredTransfer,
} from '../core/fleet/index.js';
import { durableTransaction, type SqliteDatabase } from './database.js';
import { IDENTITY_COLUMNS, transitionOf, type IdentityRow, type MessageEventWriter } from './message-event-writer.js';
import { SEARCH_TERMS, searchTermsWriter } from './personal-fields.js';
import { dataKeyWriter, messageBodyWriter, SEALED_BODY, spoolReader } from './stored-body.js';

/** A message row as a transfer reads it (TRANSFER_COLUMNS). */
export interface TransferRow extends Omit<StoredTransfer, 'raw_base64' | 'origin_pk' | 'sealed' | 'personal'> {
  pk: number;
  personal: Buffer | null;
  personal_key: Buffer | null;
  search_terms: string | null;
  raw: Buffer | null;
  body: Buffer | null;
  key: Buffer | null;
  spool_id: number | null;
  object: string | null;
}

export const TRANSFER_COLUMNS = `pk, tenant_id, id, account_id, priority, batch_code, source, payload, raw,
      ${SEALED_BODY} AS body, body_key AS key, body_object AS object,
      spool_id, personal, personal_key, ${SEARCH_TERMS} AS search_terms, mail_from, rcpt_to, subject, message_id_header, size_bytes, state, attempts, next_attempt_at, created_at, deferred_at, deferred_reason, rcpt_domains`;

/**
 * How a message's body travels: sealed as stored (a spooled one's parts with its spool's key, one in
 * the shared body store as its object's name), or in clear from before sealing.
 */
export type TravellingBody = { sealed: SealedTransfer } | { raw: Buffer } | null;

/** What travellingBody reads of a message's row. */
export interface BodyColumns {
  body: Buffer | null;
  raw: Buffer | null;
  key: Buffer | null;
  spool_id: number | null;
  object: string | null;
}

/**
 * Reads a message's body for the wire from its row's body, raw, key, spool and object. A fleet node
 * has objects only when the nodes share a body store (S3 or the cluster's): the peer reads the same one.
 */
export function travellingBody(db: SqliteDatabase): (row: BodyColumns) => TravellingBody {
  const spooled = spoolReader(db);
  const sealed = (key: Buffer, parts: Buffer[]) => ({
    sealed: { key: key.toString('base64'), parts: parts.map((part) => part.toString('base64')) },
  });
  return (row) => {
    if (row.object !== null && row.key !== null)
      return { sealed: { key: row.key.toString('base64'), object: row.object } };
    if (row.spool_id !== null) {
      const spool = spooled(row.spool_id);
      return spool.key === null ? { raw: Buffer.concat(spool.parts) } : sealed(spool.key, spool.parts);
    }
    if (row.key !== null && row.body !== null) return sealed(row.key, [row.body]);
    return row.raw === null ? null : { raw: row.raw };
  };
}

/** The row as it travels, its body sealed (or, from before sealing, its raw bytes in base64). */
export function transferReader(db: SqliteDatabase): (row: TransferRow) => StoredTransfer {
  const bodyOf = travellingBody(db);
  return ({
    pk,
    raw,
    body,
    key,
    spool_id: spoolId,
    object,
    personal,
    personal_key: personalKey,
    search_terms: terms,
    ...row
  }) => {
    const travelling = bodyOf({ body, raw, key, spool_id: spoolId, object });
    return {
      ...row,
      origin_pk: pk,
      personal:
        personal === null || personalKey === null
          ? null
          : { key: personalKey.toString('hex'), sealed: personal.toString('hex'), terms: terms ?? '' },
      sealed: travelling !== null && 'sealed' in travelling ? travelling.sealed : null,
      raw_base64: travelling !== null && 'raw' in travelling ? travelling.raw.toString('base64') : null,
    };
  };
}

/**
 * An adopted message's sealed body: its key for the row and the bytes to write beside it, a spool
 * (its key in data_keys) when it travelled in parts, or its object in the shared body store.
 */
function sealedBodyWriter(db: SqliteDatabase) {
  const storeKey = dataKeyWriter(db);
  const insertSpool = db.prepare<[number, number]>(`INSERT INTO spools (created_at, key_id) VALUES (?, ?)`);
  const insertPart = db.prepare<[number, number, Buffer]>(
    `INSERT INTO spool_parts (spool_id, seq, bytes) VALUES (?, ?, ?)`,
  );
  return (tenantId: string, sealed: SealedTransfer, now: number) => {
    const key = Buffer.from(sealed.key, 'base64');
    if ('object' in sealed)
      return { body: null, columns: { body_key: key, spool_id: null, body_object: sealed.object } };
    const parts = sealed.parts.map((part) => Buffer.from(part, 'base64'));
    if (parts.length === 1)
      return { body: parts[0] ?? null, columns: { body_key: key, spool_id: null, body_object: null } };
    const spoolId = Number(insertSpool.run(now, storeKey(tenantId, key, now)).lastInsertRowid);
    parts.forEach((part, seq) => insertPart.run(spoolId, seq, part));
    return { body: null, columns: { body_key: null, spool_id: spoolId, body_object: null } };
  };
}

/**
 * Deletes a message a peer took over. Its object in a shared body store, which the peer now reads,
 * is noted as handed over first: the delete's trigger then leaves it, and the sweep keeps it (migration 31).
 */
export function handOverRow(db: SqliteDatabase): (pk: number, now: number) => void {
  const note = db.prepare<[number, number]>(`INSERT OR IGNORE INTO handed_objects (object, handed_at)
    SELECT body_object, ? FROM messages WHERE pk = ? AND body_object IS NOT NULL`);
  const remove = db.prepare<[number]>(`DELETE FROM messages WHERE pk = ?`);
  return (pk, now) => {
    note.run(now, pk);
    remove.run(pk);
  };
}

// Held when the tenant is inactive or its batch (or all of it) suspended on this node: a suspension is this node's configuration.
const HOLD = `(SELECT active = 0 FROM tenants WHERE id = @tenant_id)
  OR EXISTS (SELECT 1 FROM suspensions s WHERE s.tenant_id = @tenant_id AND s.batch_code IN ('*', @batch_code))`;

/** An adopted message's row, held when its tenant or batch is held here. */
function adoptedInsert(db: SqliteDatabase) {
  return db.prepare<
    Record<string, unknown>,
    IdentityRow
  >(`INSERT INTO messages (tenant_id, id, account_id, priority, batch_code, source,
      payload, raw, body_key, spool_id, body_object, personal, personal_key, mail_from, rcpt_to, subject, message_id_header, size_bytes, state, suspended, attempts, next_attempt_at,
      deferred_at, deferred_reason, created_at, updated_at, rcpt_domains)
    VALUES (@tenant_id, @id, @account_id, @priority, @batch_code, @source, @payload, @raw, @body_key, @spool_id, @body_object, @personal, @personal_key, @mail_from, @rcpt_to, @subject, @message_id_header,
      @size_bytes, @state, CASE WHEN ${HOLD} THEN 1 ELSE 0 END, @attempts, @next_attempt_at, @deferred_at, @deferred_reason, @created_at, @now, @rcpt_domains)
    RETURNING ${IDENTITY_COLUMNS}`);
}

/** An adopted message's personal fields: sealed as they travelled, with their key (its terms are written beside). */
const personalColumnsOf = (personal: PersonalTransfer | null | undefined) =>
  personal === null || personal === undefined
    ? { personal: null, personal_key: null }
    : { personal: Buffer.from(personal.sealed, 'hex'), personal_key: Buffer.from(personal.key, 'hex') };

/**
 * Writes an adopted message as it travelled: its row (held when its tenant or batch is held here),
 * its sealed body beside it or its spool, and its search terms; answers the row's identity.
 */
function adoptedWriter(db: SqliteDatabase) {
  const writeSealed = sealedBodyWriter(db);
  const writeBody = messageBodyWriter(db);
  const writeTerms = searchTermsWriter(db);
  const insert = adoptedInsert(db);
  return (transfer: MessageTransfer, dueAt: number, now: number): IdentityRow => {
    const { origin_node: _from, origin_pk: _originPk, raw_base64: rawBase64, sealed, personal, ...columns } = transfer;
    const body =
      sealed === null || sealed === undefined
        ? { body: null, columns: { body_key: null, spool_id: null, body_object: null } }
        : writeSealed(transfer.tenant_id, sealed, now);
    const row = insert.get({
      ...columns,
      ...personalColumnsOf(personal),
      raw: rawBase64 === null ? null : Buffer.from(rawBase64, 'base64'),
      ...body.columns,
      next_attempt_at: dueAt,
      rcpt_domains: transfer.rcpt_domains ?? null,
      now,
    }) as IdentityRow;
    if (body.body !== null) writeBody(row.pk, body.body);
    if (personal !== null && personal !== undefined) writeTerms(row.pk, personal.terms);
    return row;
  };
}

export function createSqliteMessageTransfer(db: SqliteDatabase, writeEvent: MessageEventWriter): MessageTransferStore {
  const writeAdopted = adoptedWriter(db);
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
  const identity = db.prepare<
    [number],
    IdentityRow
  >(`SELECT ${IDENTITY_COLUMNS} FROM messages WHERE pk = ? AND state IN ('queued', 'deferred')
    AND lease_owner IS NULL`);
  const handOver = handOverRow(db);

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
        const row = writeAdopted(transfer, dueAt, now);
        const { origin_node: from, origin_pk: originPk } = transfer;
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
        handOver(originPk, now);
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
