/**
 * SQLite side of PEC mailboxes: correlation lookups, and the one durable
 * transaction that records a batch of mailbox messages (each receipt with its
 * original bytes, what it sets on its message with the `message.pec` event,
 * the mailbox record, the checkpoint). The mailbox bookkeeping (checkpoint,
 * filing) is the bounce ledger's: a PEC mailbox is watched like a bounce one.
 * The record's and the receipt's personal values are kept sealed (record-fields.ts).
 */
import { redactedText } from '../core/index.js';
import { createHash } from 'node:crypto';
import { ACCEPTANCE_TIMEOUT, type PecEffect, type PecLedger, type PecSettlement } from '../core/pec/index.js';
import type { BodySeal } from '../core/message/index.js';
import { INSERT_MAILBOX_RECORD } from './bounce-ledger.js';
import { durableTransaction, type SqliteDatabase } from './database.js';
import type { RecordFields } from './record-fields.js';
import { newDataKeys } from './stored-body.js';
import { candidateReader, createCandidateLookup, MAX_CANDIDATES, type CandidateRow } from './message-candidates.js';
import { IDENTITY_COLUMNS, transitionOf, type IdentityRow, type MessageEventWriter } from './message-event-writer.js';

export type { PecLedger };

/** The mailbox record of a settlement, as `bounce_messages` keeps it (findings are the receipt's table's). */
function recordParams(settlement: PecSettlement, at: number, personal: RecordFields): Record<string, unknown> {
  const { plan, receipt } = settlement;
  const match = plan.match;
  const key = { mailbox: settlement.mailbox, uid_validity: settlement.uidValidity, uid: settlement.uid };
  return {
    ...key,
    received_at: at,
    header_message_id: settlement.headerMessageId,
    size_bytes: settlement.sizeBytes,
    kind: settlement.kind,
    disposition: plan.disposition,
    unmatched_reason: plan.unmatchedReason,
    tenant_id: receipt?.tenantId ?? null,
    message_pk: match?.candidate.pk ?? null,
    message_id: match?.candidate.id ?? null,
    matched_by: match?.by ?? null,
    mail_id: receipt?.findings.mailId ?? null,
    original_message_id: receipt?.findings.referencedMessageId ?? null,
    // The receipt's subject names its message's recipient: erasure by that address takes the record too.
    ...personal.sealRecord(key, { from: settlement.from, subject: settlement.subject, recipients: [] }, [
      receipt?.findings.recipient ?? null,
    ]),
  };
}

/** A receipt with the digest of its original bytes, as `pec_receipts` keeps it (the bytes are sealed apart). */
function receiptParams(
  receipt: NonNullable<PecSettlement['receipt']>,
  match: PecSettlement['plan']['match'],
  personal: RecordFields,
): Record<string, unknown> {
  const { findings } = receipt;
  const sealed = personal.sealReceipt(
    { receipt_id: receipt.receiptId },
    { recipient: findings.recipient, subject: receipt.subject, errorDetail: findings.errorDetail },
  );
  return {
    receipt_id: receipt.receiptId,
    tenant_id: receipt.tenantId,
    account_id: receipt.accountId,
    mailbox: receipt.mailbox,
    uid_validity: receipt.uidValidity,
    uid: receipt.uid,
    received_at: receipt.receivedAt,
    receipt_type: findings.type,
    recognised_by: findings.recognisedBy,
    message_pk: match?.candidate.pk ?? null,
    message_id: match?.candidate.id ?? null,
    matched_by: match?.by ?? null,
    header_message_id: receipt.headerMessageId,
    referenced_message_id: findings.referencedMessageId,
    mail_id: findings.mailId,
    identificativo: findings.identificativo,
    error: findings.error,
    issuer: findings.issuer,
    issued_at: findings.issuedAt,
    ...sealed,
    size_bytes: receipt.sizeBytes,
    complete: receipt.complete ? 1 : 0,
    sha256: createHash('sha256').update(receipt.raw).digest('hex'),
  };
}

/**
 * The receipt's original bytes are sealed under a key of their own, like a message body:
 * a receipt outlives its message, and is erased with it or with its recipient.
 */
function receiptSealer(db: SqliteDatabase, seal: BodySeal) {
  const newKey = newDataKeys(db, seal);
  return (receipt: NonNullable<PecSettlement['receipt']>, at: number) => {
    const key = newKey(receipt.tenantId, at);
    return { key_id: key.keyId, raw: key.seal(0, receipt.raw) };
  };
}

export function createSqlitePecLedger(
  db: SqliteDatabase,
  writeEvent: MessageEventWriter,
  seal: BodySeal,
  personal: RecordFields,
): PecLedger {
  const lookup = createCandidateLookup(db, seal);
  const toCandidate = candidateReader(db, seal);
  const byIdentificativo = db.prepare<
    Record<string, unknown>,
    CandidateRow
  >(`SELECT DISTINCT m.tenant_id, m.pk, m.id, m.rcpt_to FROM pec_receipts r
    JOIN messages m ON m.pk = r.message_pk WHERE r.tenant_id = @tenant AND r.identificativo = @value AND r.message_pk IS NOT NULL LIMIT ${MAX_CANDIDATES}`);
  const insertRecord = db.prepare(INSERT_MAILBOX_RECORD);
  const insertReceipt =
    db.prepare(`INSERT INTO pec_receipts (receipt_id, tenant_id, account_id, mailbox, uid_validity, uid, received_at,
      receipt_type, recognised_by, message_pk, message_id, matched_by, recipient, header_message_id, referenced_message_id, mail_id,
      identificativo, error, error_detail, issuer, issued_at, subject, size_bytes, complete, sha256, raw, key_id,
      personal_sealed, recipient_digest)
    VALUES (@receipt_id, @tenant_id, @account_id, @mailbox, @uid_validity, @uid, @received_at, @receipt_type, @recognised_by, @message_pk,
      @message_id, @matched_by, @recipient, @header_message_id, @referenced_message_id, @mail_id, @identificativo, @error, @error_detail,
      @issuer, @issued_at, @subject, @size_bytes, @complete, @sha256, @raw, @key_id, @personal_sealed, @recipient_digest)`);
  const sealed = receiptSealer(db, seal);
  // The first acceptance and the first delivery stand; the latest error does. Any receipt ends the
  // acceptance wait (the message is in the PEC system), and a late acceptance clears the timeout's error.
  const applyEffect = db.prepare<Record<string, unknown>, IdentityRow>(`UPDATE messages SET
      pec_rda_at = CASE WHEN @accepted = 1 THEN coalesce(pec_rda_at, @at) ELSE pec_rda_at END,
      pec_rdc_at = CASE WHEN @delivered = 1 THEN coalesce(pec_rdc_at, @at) ELSE pec_rdc_at END,
      pec_error = CASE WHEN @error IS NOT NULL THEN @error WHEN @accepted = 1 AND pec_error LIKE '${ACCEPTANCE_TIMEOUT}%' THEN NULL ELSE pec_error END,
      pec_error_at = CASE WHEN @error IS NOT NULL THEN @at WHEN @accepted = 1 AND pec_error LIKE '${ACCEPTANCE_TIMEOUT}%' THEN NULL ELSE pec_error_at END,
      pec_awaiting_since = NULL, updated_at = @now
    WHERE pk = @pk AND tenant_id = @tenant RETURNING ${IDENTITY_COLUMNS}`);
  const advance = db.prepare(
    `UPDATE bounce_mailboxes SET last_uid = max(last_uid, @uid), updated_at = @at WHERE mailbox = @mailbox AND uid_validity = @uid_validity`,
  );

  const apply = (effect: PecEffect, now: number): void => {
    const row = applyEffect.get({
      pk: effect.messagePk,
      tenant: effect.tenantId,
      accepted: effect.accepted ? 1 : 0,
      delivered: effect.delivered ? 1 : 0,
      // The gestore's words name the recipient (`errore-consegna: ann@pec.example: …`): kept redacted, as every diagnostic.
      error: redactedText(effect.error),
      at: effect.at,
      now,
    });
    // The message is gone (retention): the receipt is kept, nobody is told.
    if (row === undefined) return;
    writeEvent(
      transitionOf(row, 'pec', effect.receivedAt, { text: effect.error ?? effect.event, data: effect.details }),
    );
  };

  const settleOne = (settlement: PecSettlement, at: number): void => {
    const { plan, receipt } = settlement;
    const inserted = insertRecord.run(recordParams(settlement, at, personal));
    // Recorded before (the checkpoint lagged behind a crash): neither the receipt nor its effect twice.
    if (inserted.changes > 0 && receipt !== null) {
      insertReceipt.run({ ...receiptParams(receipt, plan.match, personal), ...sealed(receipt, at) });
      if (plan.effect !== null) apply(plan.effect, at);
    }
    advance.run({ mailbox: settlement.mailbox, uid_validity: settlement.uidValidity, uid: settlement.uid, at });
  };

  return {
    // The gestore's identificativo is known from earlier receipts only; the other references are a bounce's too.
    candidates: (by, value, tenantId) =>
      by === 'identificativo'
        ? byIdentificativo.all({ value, tenant: tenantId }).map(toCandidate)
        : lookup(by, value, tenantId),
    settle: (batch, at) => {
      durableTransaction(db, () => {
        for (const settlement of batch) settleOne(settlement, at);
      });
    },
  };
}
