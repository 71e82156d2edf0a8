/**
 * The personal values of a mailbox record (`bounce_messages`: the From header, the
 * subject, the verdict per recipient) and of a PEC receipt (recipient, subject, error
 * detail), kept sealed in the secret box (migration 21) with a context that binds them
 * to their row, and beside them the blind-index digests of the addresses they name,
 * which erasure by address matches on (message-erasure.ts). Message-IDs stay in clear:
 * correlation needs them, and they name no one.
 *
 * A row written before keeps its values in clear and no sealed ones: it reads as it is
 * until the background sealer (record-sealer.ts) seals it, and erasure matches its clear
 * forms meanwhile.
 */
import { addressDigests, parseMailbox, type BlindIndex, type SecretBox } from '../core/index.js';
import type { RecipientFinding } from '../core/bounce/index.js';

/** What a mailbox record keeps of people. */
export interface MailboxRecordPersonal {
  from: string | null;
  subject: string | null;
  recipients: RecipientFinding[];
}

/** What a PEC receipt keeps of people (its original bytes are sealed apart, under its data key). */
export interface ReceiptPersonal {
  recipient: string | null;
  subject: string | null;
  errorDetail: string | null;
}

/** A mailbox record as its row names it: one message of one mailbox. */
export interface MailboxRecordKey {
  mailbox: string;
  uid_validity: number | string;
  uid: number | string;
}

export const mailboxRecordContext = (row: MailboxRecordKey): string =>
  `bounce-message:${row.mailbox}/${row.uid_validity}/${row.uid}`;
export const receiptContext = (row: { receipt_id: string }): string => `pec-receipt:${row.receipt_id}`;

/** The sealed columns, as key rotation (key-rotation.ts) reseals them: what each context reads of its row. */
export const PERSONAL_SEALED_COLUMNS = [
  {
    table: 'bounce_messages',
    column: 'personal_sealed',
    keys: 'mailbox, uid_validity, uid',
    context: (row: Record<string, string>) =>
      mailboxRecordContext({ mailbox: row.mailbox ?? '', uid_validity: row.uid_validity ?? '', uid: row.uid ?? '' }),
  },
  {
    table: 'pec_receipts',
    column: 'personal_sealed',
    keys: 'receipt_id',
    context: (row: Record<string, string>) => receiptContext({ receipt_id: row.receipt_id ?? '' }),
  },
] as const;

/** The address a header or a finding names (`Name <addr>`, `<addr>`, `addr`); null when none. */
function addressIn(text: string | null | undefined): string | null {
  if (text === null || text === undefined) return null;
  const parsed = parseMailbox(text)?.address ?? /<([^<>\s]+@[^<>\s]+)>/u.exec(text)?.[1] ?? text.trim();
  return parsed.includes('@') ? parsed : null;
}

/** A record's columns as stored: the clear ones left empty. */
export interface SealedRecordColumns {
  from_header: null;
  subject: null;
  findings: '[]';
  personal_sealed: string;
  /** JSON array of the digests of the From address, of every address a finding names, and of those named with them. */
  address_digests: string;
}

export interface SealedReceiptColumns {
  recipient: null;
  subject: null;
  error_detail: null;
  personal_sealed: string;
  recipient_digest: string | null;
}

/** A mailbox record's row as read: sealed values, or clear ones from before. */
export interface StoredRecordPersonal {
  from_header: string | null;
  subject: string | null;
  findings: string;
  personal_sealed: string | null;
}

export interface StoredReceiptPersonal {
  recipient: string | null;
  subject: string | null;
  error_detail: string | null;
  personal_sealed: string | null;
}

export interface RecordFields {
  /** `named`: more addresses the record is about (a PEC receipt's recipient), digested with its own. */
  sealRecord(
    key: MailboxRecordKey,
    personal: MailboxRecordPersonal,
    named?: ReadonlyArray<string | null>,
  ): SealedRecordColumns;
  openRecord(key: MailboxRecordKey, row: StoredRecordPersonal): MailboxRecordPersonal;
  sealReceipt(key: { receipt_id: string }, personal: ReceiptPersonal): SealedReceiptColumns;
  openReceipt(key: { receipt_id: string }, row: StoredReceiptPersonal): ReceiptPersonal;
}

export function createRecordFields(secrets: SecretBox, index: BlindIndex): RecordFields {
  const digests = (texts: Array<string | null | undefined>): string[] => {
    const addresses = [...new Set(texts.map(addressIn).filter((address) => address !== null))];
    return addressDigests(index, addresses);
  };
  return {
    sealRecord: (key, personal, named = []) => ({
      from_header: null,
      subject: null,
      findings: '[]',
      personal_sealed: secrets.seal(JSON.stringify(personal), mailboxRecordContext(key)),
      address_digests: JSON.stringify(
        digests([
          personal.from,
          ...personal.recipients.flatMap((finding) => [finding.recipient, ...(finding.alternates ?? [])]),
          ...named,
        ]),
      ),
    }),
    openRecord: (key, row) =>
      row.personal_sealed === null
        ? {
            from: row.from_header,
            subject: row.subject,
            recipients: JSON.parse(row.findings) as RecipientFinding[],
          }
        : (JSON.parse(secrets.open(row.personal_sealed, mailboxRecordContext(key))) as MailboxRecordPersonal),
    sealReceipt: (key, personal) => ({
      recipient: null,
      subject: null,
      error_detail: null,
      personal_sealed: secrets.seal(JSON.stringify(personal), receiptContext(key)),
      recipient_digest: digests([personal.recipient])[0] ?? null,
    }),
    openReceipt: (key, row) =>
      row.personal_sealed === null
        ? { recipient: row.recipient, subject: row.subject, errorDetail: row.error_detail }
        : (JSON.parse(secrets.open(row.personal_sealed, receiptContext(key))) as ReceiptPersonal),
  };
}
