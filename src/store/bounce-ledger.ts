/**
 * SQLite side of the bounce mailbox: checkpoints, correlation lookups, and the
 * one durable transaction that applies a mailbox message's plan (bounce or
 * complaint on the message, suppressions, the record of the mailbox message,
 * the checkpoint). Suppressions from bounces are mirrored as admin events. A
 * record keeps its From, subject and findings sealed (record-fields.ts).
 */
import type {
  BounceDisposition,
  BounceLedger,
  BounceMessageListing,
  BouncePlan,
  MailboxItem,
} from '../core/bounce/index.js';
import type { IdSource, ChangeLog } from '../core/index.js';
import type { SuppressionRepository } from '../core/tenant/index.js';
import type { BodySeal } from '../core/message/index.js';
import { durableTransaction, type SqliteDatabase } from './database.js';
import type { MessageBounceWriter } from './message-bounces.js';
import { createCandidateLookup } from './message-candidates.js';
import type { RecordFields } from './record-fields.js';
import { suppressionAdded } from './suppression-change.js';

interface BounceMessageRow {
  seq: number;
  mailbox: string;
  uid_validity: number;
  uid: number;
  received_at: number;
  header_message_id: string | null;
  from_header: string | null;
  subject: string | null;
  size_bytes: number;
  kind: string;
  disposition: BounceDisposition;
  unmatched_reason: string | null;
  tenant_id: string | null;
  message_pk: number | null;
  message_id: string | null;
  matched_by: string | null;
  mail_id: string | null;
  original_message_id: string | null;
  findings: string;
  personal_sealed: string | null;
  filed_at: number | null;
}

const toView = (row: BounceMessageRow, personal: RecordFields): BounceMessageListing => {
  const { from, subject, recipients } = personal.openRecord(row, row);
  return {
    seq: row.seq,
    mailbox: row.mailbox,
    uid: row.uid,
    receivedAt: row.received_at,
    headerMessageId: row.header_message_id,
    from,
    subject,
    sizeBytes: row.size_bytes,
    kind: row.kind,
    disposition: row.disposition,
    unmatchedReason: row.unmatched_reason,
    tenantId: row.tenant_id,
    clientId: row.message_id,
    matchedBy: row.matched_by,
    mailId: row.mail_id,
    originalMessageId: row.original_message_id,
    recipients,
    filed: row.filed_at !== null,
  };
};

/**
 * A mailbox record (the bounce ledger's, or the PEC ledger's with no findings): its personal
 * values in `personal_sealed`, `findings` '[]', and the digests erasure matches on.
 */
export const INSERT_MAILBOX_RECORD = `INSERT INTO bounce_messages (mailbox, uid_validity, uid, received_at, header_message_id,
    from_header, subject, size_bytes, kind, disposition, unmatched_reason, tenant_id, message_pk, message_id, matched_by, mail_id,
    original_message_id, findings, personal_sealed, address_digests)
  VALUES (@mailbox, @uid_validity, @uid, @received_at, @header_message_id, @from_header, @subject, @size_bytes, @kind, @disposition,
    @unmatched_reason, @tenant_id, @message_pk, @message_id, @matched_by, @mail_id, @original_message_id, @findings,
    @personal_sealed, @address_digests)
  ON CONFLICT (mailbox, uid_validity, uid) DO NOTHING`;

/** The record of a mailbox message, as `bounce_messages` keeps it. */
function messageParams(
  item: MailboxItem,
  plan: BouncePlan,
  at: number,
  personal: RecordFields,
): Record<string, unknown> {
  const match = plan.match;
  const key = { mailbox: item.mailbox, uid_validity: item.uidValidity, uid: item.uid };
  return {
    ...key,
    received_at: at,
    header_message_id: item.headerMessageId,
    size_bytes: item.sizeBytes,
    kind: item.findings.kind,
    disposition: plan.disposition,
    unmatched_reason: plan.unmatchedReason,
    tenant_id: match?.candidate.tenantId ?? null,
    message_pk: match?.candidate.pk ?? null,
    message_id: match?.candidate.id ?? null,
    matched_by: match?.by ?? null,
    mail_id: item.findings.mailId,
    original_message_id: item.findings.originalMessageId,
    ...personal.sealRecord(key, { from: item.from, subject: item.subject, recipients: item.findings.recipients }),
  };
}

export interface BounceLedgerDeps {
  bounces: MessageBounceWriter;
  suppressions: SuppressionRepository;
  changes: ChangeLog;
  ids: IdSource;
  /** Opens the candidates' sealed recipients. */
  seal: BodySeal;
  personal: RecordFields;
}

/** The per-mailbox checkpoint: the UIDVALIDITY and the last UID settled. */
function createCheckpoints(db: SqliteDatabase): Pick<BounceLedger, 'checkpoint' | 'resetCheckpoint'> {
  const checkpoint = db.prepare<[string], { uid_validity: number; last_uid: number }>(
    `SELECT uid_validity, last_uid FROM bounce_mailboxes WHERE mailbox = ?`,
  );
  const resetCheckpoint =
    db.prepare(`INSERT INTO bounce_mailboxes (mailbox, uid_validity, last_uid, updated_at) VALUES (@mailbox, @uid_validity, 0, @at)
    ON CONFLICT (mailbox) DO UPDATE SET uid_validity = excluded.uid_validity, last_uid = 0, updated_at = excluded.updated_at`);
  return {
    checkpoint: (mailbox) => {
      const row = checkpoint.get(mailbox);
      return row === undefined ? null : { uidValidity: row.uid_validity, lastUid: row.last_uid };
    },
    resetCheckpoint: (mailbox, uidValidity, at) => {
      durableTransaction(db, () => resetCheckpoint.run({ mailbox, uid_validity: uidValidity, at }));
    },
  };
}

/** Applies a batch of mailbox messages' plans and advances the checkpoint, in one durable transaction. */
function createBounceSettle(db: SqliteDatabase, deps: BounceLedgerDeps): BounceLedger['settle'] {
  const advance = db.prepare(
    `UPDATE bounce_mailboxes SET last_uid = max(last_uid, @uid), updated_at = @at WHERE mailbox = @mailbox AND uid_validity = @uid_validity`,
  );
  const insertMessage = db.prepare(INSERT_MAILBOX_RECORD);

  const settleOne = (item: MailboxItem, plan: BouncePlan, at: number): void => {
    const match = plan.match;
    const inserted = insertMessage.run(messageParams(item, plan, at, deps.personal));
    // Settled before (the checkpoint lagged behind a crash): its effects are not applied twice.
    if (inserted.changes > 0) {
      for (const bounce of plan.bounces) deps.bounces.bounce(bounce);
      for (const complaint of plan.complaints) deps.bounces.complaint(complaint);
      for (const suppression of plan.suppressions) {
        deps.suppressions.upsert(suppression);
        const source = {
          eventId: deps.ids.uuid(),
          tenantId: suppression.tenantId,
          actor: `bounce:${item.mailbox}`,
          messageId: match?.candidate.id ?? '',
        };
        deps.changes.record(suppressionAdded(suppression, deps.suppressions.digestOf(suppression.address), source));
      }
    }
    advance.run({ mailbox: item.mailbox, uid_validity: item.uidValidity, uid: item.uid, at });
  };

  return (batch, at) => {
    durableTransaction(db, () => {
      for (const { item, plan } of batch) settleOne(item, plan, at);
    });
  };
}

/** Mailbox messages settled but not yet moved out of the inbox. */
function createFiling(db: SqliteDatabase): Pick<BounceLedger, 'unfiled' | 'markFiled'> {
  const unfiled = db.prepare<
    [string, number],
    { uid: number; disposition: BounceDisposition }
  >(`SELECT uid, disposition FROM bounce_messages
    WHERE mailbox = ? AND uid_validity = ? AND filed_at IS NULL ORDER BY uid`);
  const markFiled = db.prepare(
    `UPDATE bounce_messages SET filed_at = @at WHERE mailbox = @mailbox AND uid_validity = @uid_validity AND uid = @uid`,
  );
  return {
    unfiled: (mailbox, uidValidity) => unfiled.all(mailbox, uidValidity),
    markFiled: (mailbox, uidValidity, uids, at) => {
      durableTransaction(db, () => {
        for (const uid of uids) markFiled.run({ mailbox, uid_validity: uidValidity, uid, at });
      });
    },
  };
}

/** The record of mailbox messages: listed for the console and API, pruned once filed. */
function createHistory(db: SqliteDatabase, personal: RecordFields): Pick<BounceLedger, 'list' | 'prune'> {
  const list = db.prepare<Record<string, unknown>, BounceMessageRow>(`SELECT * FROM bounce_messages
    WHERE (@disposition IS NULL OR disposition = @disposition) AND (@tenant IS NULL OR tenant_id = @tenant) AND seq < @before
    ORDER BY seq DESC LIMIT @limit`);
  const prune = db.prepare(`DELETE FROM bounce_messages WHERE received_at < ? AND filed_at IS NOT NULL`);
  return {
    list: (filter) =>
      list
        .all({
          disposition: filter.disposition,
          tenant: filter.tenantId,
          before: filter.before ?? Number.MAX_SAFE_INTEGER,
          limit: filter.limit,
        })
        .map((row) => toView(row, personal)),
    prune: (before) => prune.run(before).changes,
  };
}

export function createSqliteBounceLedger(db: SqliteDatabase, deps: BounceLedgerDeps): BounceLedger {
  const checkpoints = createCheckpoints(db);
  const candidates = createCandidateLookup(db, deps.seal);
  const previous = db.prepare<
    [string, string],
    { disposition: BounceDisposition }
  >(`SELECT disposition FROM bounce_messages
    WHERE mailbox = ? AND header_message_id = ? ORDER BY seq LIMIT 1`);
  return {
    ...checkpoints,
    candidates,
    previousDisposition: (mailbox, headerMessageId) => previous.get(mailbox, headerMessageId)?.disposition ?? null,
    settle: createBounceSettle(db, deps),
    ...createHistory(db, deps.personal),
    ...createFiling(db),
  };
}
