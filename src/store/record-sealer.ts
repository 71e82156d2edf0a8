/**
 * Seals the personal values a mailproxy from before migration 21 kept in clear in mailbox
 * records and PEC receipts (record-fields.ts), as the body sealer seals old bodies and
 * in its batches (body-sealer.ts runs these kinds after its own): each row gets its sealed
 * values and digests, its clear columns emptied. What remains is what the partial indexes
 * list (bounce_messages_clear, pec_receipts_clear): resumable, never repeated.
 */
import type { RecipientFinding } from '../core/bounce/index.js';
import type { SqliteDatabase } from './database.js';
import type { RecordFields } from './record-fields.js';
import { rowSealing, type SealingBudget } from './row-sealing.js';

/** Personal values still in clear, by where they are kept. */
export interface ClearRecords {
  mailboxRecords: number;
  pecReceiptFields: number;
}

export interface RecordSealing {
  /** Each seals rows within the budget (spending it) and answers how many. */
  kinds: Array<(budget: SealingBudget, now: number) => number>;
  remaining(): ClearRecords;
}

// INDEXED BY: the walk and the counts read the partial indexes, or fail loudly if they cannot.
const CLEAR_RECORD = `FROM bounce_messages INDEXED BY bounce_messages_clear
  WHERE personal_sealed IS NULL AND (from_header IS NOT NULL OR subject IS NOT NULL OR findings <> '[]')`;
const CLEAR_RECEIPT = `FROM pec_receipts INDEXED BY pec_receipts_clear
  WHERE personal_sealed IS NULL AND (recipient IS NOT NULL OR subject IS NOT NULL OR error_detail IS NOT NULL)`;

interface RecordRow {
  mailbox: string;
  uid_validity: number;
  uid: number;
  from_header: string | null;
  subject: string | null;
  findings: string;
}

function createMailboxRecordSealing(db: SqliteDatabase, personal: RecordFields) {
  const next = db.prepare<[number], number>(`SELECT seq ${CLEAR_RECORD} ORDER BY seq LIMIT ?`).pluck();
  const read = db.prepare<[number], RecordRow>(
    `SELECT mailbox, uid_validity, uid, from_header, subject, findings FROM bounce_messages WHERE seq = ?`,
  );
  const update = db.prepare(`UPDATE bounce_messages SET from_header = @from_header, subject = @subject,
    findings = @findings, personal_sealed = @personal_sealed, address_digests = @address_digests WHERE seq = @seq`);
  return rowSealing({
    next: (limit) => next.all(limit),
    read: (seq) => read.get(seq),
    seal(seq, row) {
      const recipients = JSON.parse(row.findings) as RecipientFinding[];
      update.run({ seq, ...personal.sealRecord(row, { from: row.from_header, subject: row.subject, recipients }) });
      return row.findings.length + (row.from_header?.length ?? 0) + (row.subject?.length ?? 0);
    },
  });
}

interface ReceiptRow {
  receipt_id: string;
  recipient: string | null;
  subject: string | null;
  error_detail: string | null;
}

function createReceiptFieldSealing(db: SqliteDatabase, personal: RecordFields) {
  const next = db.prepare<[number], number>(`SELECT seq ${CLEAR_RECEIPT} ORDER BY seq LIMIT ?`).pluck();
  const read = db.prepare<[number], ReceiptRow>(
    `SELECT receipt_id, recipient, subject, error_detail FROM pec_receipts WHERE seq = ?`,
  );
  const update = db.prepare(`UPDATE pec_receipts SET recipient = @recipient, subject = @subject,
    error_detail = @error_detail, personal_sealed = @personal_sealed, recipient_digest = @recipient_digest WHERE seq = @seq`);
  return rowSealing({
    next: (limit) => next.all(limit),
    read: (seq) => read.get(seq),
    seal(seq, row) {
      const values = { recipient: row.recipient, subject: row.subject, errorDetail: row.error_detail };
      update.run({ seq, ...personal.sealReceipt(row, values) });
      return (row.recipient?.length ?? 0) + (row.subject?.length ?? 0) + (row.error_detail?.length ?? 0);
    },
  });
}

export function createRecordSealing(db: SqliteDatabase, personal: RecordFields): RecordSealing {
  const count = (from: string) => db.prepare<[], number>(`SELECT count(*) ${from}`).pluck();
  const counts = { mailboxRecords: count(CLEAR_RECORD), pecReceiptFields: count(CLEAR_RECEIPT) };
  return {
    kinds: [createMailboxRecordSealing(db, personal), createReceiptFieldSealing(db, personal)],
    remaining: () => ({
      mailboxRecords: counts.mailboxRecords.get() ?? 0,
      pecReceiptFields: counts.pecReceiptFields.get() ?? 0,
    }),
  };
}
