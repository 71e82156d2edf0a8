/**
 * PEC receipts as the API reads them (the list, one receipt's original bytes)
 * and the acceptance timeout: a message sent through a PEC account that has
 * heard nothing from its gestore in time gets its pec_error and its event.
 * A receipt's recipient, subject and error detail are read opened (record-fields.ts).
 */
import { ACCEPTANCE_TIMEOUT, type PecReceiptReader, type PecReceiptListing } from '../core/pec/index.js';
import type { BodySeal } from '../core/message/index.js';
import { keyOf, openStored } from './stored-body.js';
import { durableTransaction, type SqliteDatabase } from './database.js';
import type { RecordFields } from './record-fields.js';
import { IDENTITY_COLUMNS, transitionOf, type IdentityRow, type MessageEventWriter } from './message-event-writer.js';

/** The reader the API uses (list, raw), and what the store adds for messages and housekeeping. */
export interface PecReceipts extends PecReceiptReader {
  /** A message's receipts, in the order they arrived. */
  ofMessage(messagePk: number): PecReceiptListing[];
  /**
   * Messages that have waited for their acceptance since before `cutoff`: each
   * gets its pec_error and a `message.pec` event (`acceptance_timeout`), at
   * most `limit` per call, in one durable transaction. One whose account is
   * no longer PEC just stops waiting (`released`).
   */
  expireAwaiting(cutoff: number, now: number, limit: number): { expired: number; released: number };
  /** How many messages wait for their acceptance now (a walk of the partial index of waiting ones). */
  awaitingCount(): number;
  /** Forgets receipts read before `before`, their bytes with them; how many. */
  prune(before: number): number;
}

/** A row as stored: `complete` as SQLite's 0/1, and `seq` for paging. */
interface ReceiptRow {
  seq: number;
  receipt_id: string;
  tenant_id: string;
  account_id: string;
  message_id: string | null;
  receipt_type: string;
  recognised_by: string;
  matched_by: string | null;
  recipient: string | null;
  error: string | null;
  error_detail: string | null;
  issuer: string | null;
  identificativo: string | null;
  referenced_message_id: string | null;
  header_message_id: string | null;
  subject: string | null;
  issued_at: number | null;
  received_at: number;
  size_bytes: number;
  complete: number;
  sha256: string;
  personal_sealed: string | null;
}

const VIEW_COLUMNS = `seq, receipt_id, tenant_id, account_id, message_id, receipt_type, recognised_by, matched_by, recipient, error, error_detail,
  issuer, identificativo, referenced_message_id, header_message_id, subject, issued_at, received_at, size_bytes, complete, sha256, personal_sealed`;

const seconds = (ms: number): number => Math.floor(ms / 1000);

// Field by field, not a spread: the row of `raw()` also carries the bytes, which the listing must not.
const toListing = (row: ReceiptRow, personal: RecordFields): PecReceiptListing => {
  const { recipient, subject, errorDetail } = personal.openReceipt(row, row);
  return {
    receiptId: row.receipt_id,
    tenantId: row.tenant_id,
    accountId: row.account_id,
    clientId: row.message_id,
    receiptType: row.receipt_type,
    recognisedBy: row.recognised_by,
    matchedBy: row.matched_by,
    recipient,
    error: row.error,
    errorDetail,
    issuer: row.issuer,
    identificativo: row.identificativo,
    referencedMessageId: row.referenced_message_id,
    headerMessageId: row.header_message_id,
    subject,
    issuedAt: row.issued_at,
    receivedAt: row.received_at,
    sizeBytes: row.size_bytes,
    complete: row.complete === 1,
    sha256: row.sha256,
  };
};

export function createSqlitePecReceipts(
  db: SqliteDatabase,
  writeEvent: MessageEventWriter,
  seal: BodySeal,
  personal: RecordFields,
): PecReceipts {
  const listing = (row: ReceiptRow) => toListing(row, personal);
  const list = db.prepare<Record<string, unknown>, ReceiptRow>(`SELECT ${VIEW_COLUMNS} FROM pec_receipts
    WHERE (@tenant IS NULL OR tenant_id = @tenant) AND (@message IS NULL OR message_id = @message) AND seq < @before
    ORDER BY seq DESC LIMIT @limit`);
  const ofMessage = db.prepare<[number], ReceiptRow>(
    `SELECT ${VIEW_COLUMNS} FROM pec_receipts WHERE message_pk = ? ORDER BY seq`,
  );
  const one = db.prepare<
    Record<string, unknown>,
    ReceiptRow & { raw: Buffer; key: Buffer | null }
  >(`SELECT ${VIEW_COLUMNS}, raw, ${keyOf('key_id')} AS key FROM pec_receipts
    WHERE receipt_id = @id AND (@tenant IS NULL OR tenant_id = @tenant)`);
  // In bounded steps: a first prune after years of receipts must not hold the writer for long.
  const prune = db.prepare(
    `DELETE FROM pec_receipts WHERE seq IN (SELECT seq FROM pec_receipts WHERE received_at < ? ORDER BY seq LIMIT 1000)`,
  );
  const awaiting = db.prepare<[], { n: number }>(
    `SELECT count(*) AS n FROM messages WHERE pec_awaiting_since IS NOT NULL`,
  );

  return {
    awaitingCount: () => awaiting.get()?.n ?? 0,
    prune: (before) => {
      let removed = 0;
      for (let step = prune.run(before).changes; step > 0; step = prune.run(before).changes) removed += step;
      return removed;
    },
    list: (filter) =>
      list
        .all({
          tenant: filter.tenantId,
          message: filter.clientId,
          before: filter.before ?? Number.MAX_SAFE_INTEGER,
          limit: filter.limit,
        })
        .map((row) => ({ ...listing(row), seq: row.seq })),
    ofMessage: (messagePk) => ofMessage.all(messagePk).map(listing),
    raw: (receiptId, tenantId) => {
      const row = one.get({ id: receiptId, tenant: tenantId });
      const raw = row === undefined ? null : openStored(seal, row.tenant_id, { key: row.key, parts: [row.raw] });
      // An erased receipt's bytes are gone: it is not found.
      return row === undefined || raw === null ? null : { receipt: listing(row), raw };
    },
    expireAwaiting: createAwaitingExpiry(db, writeEvent),
  };
}

/** Messages whose acceptance receipt never came: marked with the PEC error, or released when their account is no longer PEC. */
function createAwaitingExpiry(db: SqliteDatabase, writeEvent: MessageEventWriter): PecReceipts['expireAwaiting'] {
  const due = db.prepare<
    Record<string, unknown>,
    { pk: number; since: number; pec: number }
  >(`SELECT m.pk, m.pec_awaiting_since AS since,
      coalesce((SELECT a.is_pec FROM accounts a WHERE a.tenant_id = m.tenant_id AND a.id = m.account_id), 0) AS pec
    FROM messages m WHERE m.pec_awaiting_since IS NOT NULL AND m.pec_awaiting_since <= @cutoff ORDER BY m.pec_awaiting_since LIMIT @limit`);
  // Its account is no longer PEC (or is gone): nobody expects a receipt for it any more.
  const release = db.prepare(`UPDATE messages SET pec_awaiting_since = NULL WHERE pk = ?`);
  const expire = db.prepare<Record<string, unknown>, IdentityRow>(`UPDATE messages
    SET pec_error = @error, pec_error_at = @now, pec_awaiting_since = NULL, updated_at = @now
    WHERE pk = @pk AND pec_awaiting_since IS NOT NULL RETURNING ${IDENTITY_COLUMNS}`);
  return (cutoff, now, limit) =>
    durableTransaction(db, () => {
      const error = `${ACCEPTANCE_TIMEOUT}: no acceptance receipt from the PEC provider`;
      let expired = 0;
      let released = 0;
      for (const { pk, since, pec } of due.all({ cutoff, limit })) {
        if (pec !== 1) {
          released += release.run(pk).changes;
          continue;
        }
        const row = expire.get({ pk, now, error });
        if (row === undefined) continue;
        expired += 1;
        writeEvent(
          transitionOf(row, 'pec', now, {
            text: error,
            data: {
              pec_event: ACCEPTANCE_TIMEOUT,
              error,
              sent_ts: seconds(since),
              waited_seconds: seconds(now - since),
            },
          }),
        );
      }
      return { expired, released };
    });
}
