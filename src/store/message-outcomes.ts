/**
 * Records how attempts ended, many at once in one transaction (group commit).
 * An outcome only applies to the attempt that is still leased: a late answer
 * for a lease that was reclaimed meanwhile is dropped, never overwriting.
 * The relay's words are kept with their addresses redacted (core/address-redaction.ts).
 */
import type { BodySeal } from '../core/message/index.js';
import { refusedSealer } from './event-fields.js';
import { redactedText } from '../core/index.js';
import { providerIdOfReply } from '../core/provider/index.js';
import type { RecordedOutcome } from '../core/message/index.js';
import type { SqliteDatabase } from './database.js';
import type { MessageEventWriter } from './message-event-writer.js';
import { createFileRecorder } from './message-files.js';

interface Identity {
  pk: number;
  tenant_id: string;
  id: string;
  account_id: string;
  batch_code: string | null;
  /** Erased while it was being sent: its outcome is recorded without the relay's words (issue 45). */
  erased: number;
}

const RETURNING = 'RETURNING pk, tenant_id, id, account_id, batch_code, erased_at IS NOT NULL AS erased';
/** What an outcome writes of the relay's words and the refused recipients: nothing once the message was erased. */
const UNLESS_ERASED = (value: string, erased: string): string =>
  `CASE WHEN erased_at IS NULL THEN ${value} ELSE ${erased} END`;
const LEASED = `pk = @pk AND state = 'sending' AND attempts = @attempt`;
const CLEAR_LEASE = 'lease_owner = NULL, lease_expires_at = NULL, updated_at = @at';
/**
 * A message a PEC account relayed waits for its acceptance receipt from now
 * (store/pec-receipts.ts ends the wait) unless a receipt came first: the
 * gestore may be quicker than our own commit of the 250.
 */
const AWAIT_ACCEPTANCE = `pec_awaiting_since = CASE WHEN pec_rda_at IS NULL AND pec_error_at IS NULL
  AND EXISTS (SELECT 1 FROM accounts a WHERE a.tenant_id = messages.tenant_id AND a.id = messages.account_id AND a.is_pec = 1) THEN @at ELSE NULL END`;

/**
 * An attempt's offloaded files: kept when its message was sent (and not erased meanwhile), their
 * links live from then on; removed otherwise (a later attempt writes its own).
 */
function keepOrDiscard(
  files: ReturnType<typeof createFileRecorder>,
  outcome: RecordedOutcome,
  row: Identity | undefined,
): void {
  if (outcome.files === undefined) return;
  if (outcome.kind === 'sent' && row !== undefined && row.erased === 0)
    files.keep(outcome.files, { pk: row.pk, tenantId: row.tenant_id }, outcome.at);
  else files.discard(outcome.files);
}

export function createOutcomeRecorder(db: SqliteDatabase, writeEvent: MessageEventWriter, seal: BodySeal) {
  const sealRefused = refusedSealer(db, seal);
  const files = createFileRecorder(db);
  const statements = {
    // The id the relay's 250 named (core/provider/reply.ts): the provider's webhooks name the message by it.
    sent: db.prepare<
      Record<string, unknown>,
      Identity
    >(`UPDATE messages SET state = 'sent', sent_at = @at, error_at = NULL, error = NULL,
      provider_message_id = @provider_message_id,
      deferred_reason = NULL, last_reply_code = @reply_code, last_enhanced_status = @enhanced_status,
      refused_recipients = ${UNLESS_ERASED('@refused', 'NULL')}, ${CLEAR_LEASE},
      ${AWAIT_ACCEPTANCE}
      WHERE ${LEASED} ${RETURNING}`),
    deferred: db.prepare<
      Record<string, unknown>,
      Identity
    >(`UPDATE messages SET state = 'deferred', next_attempt_at = @next_attempt_at,
      deferred_at = @next_attempt_at, deferred_reason = ${UNLESS_ERASED('@reason', 'NULL')}, last_reply_code = @reply_code, last_enhanced_status = @enhanced_status, ${CLEAR_LEASE}
      WHERE ${LEASED} ${RETURNING}`),
    failed: db.prepare<
      Record<string, unknown>,
      Identity
    >(`UPDATE messages SET state = 'error', error_at = @at, error = ${UNLESS_ERASED('@reason', "'erased'")},
      last_reply_code = @reply_code, last_enhanced_status = @enhanced_status,
      refused_recipients = ${UNLESS_ERASED('@refused', 'NULL')}, ${CLEAR_LEASE}
      WHERE ${LEASED} ${RETURNING}`),
    released: db.prepare<
      Record<string, unknown>,
      Identity
    >(`UPDATE messages SET state = 'queued', attempts = attempts - 1, ${CLEAR_LEASE}
      WHERE ${LEASED} ${RETURNING}`),
  };

  const record = db.transaction((outcomes: readonly RecordedOutcome[]): number => {
    let applied = 0;
    for (const outcome of outcomes) {
      const refused = 'refused' in outcome && outcome.refused.length > 0 ? outcome.refused : null;
      const row = statements[outcome.kind].get({
        pk: outcome.pk,
        attempt: outcome.attempt,
        at: outcome.at,
        reply_code: outcome.replyCode,
        enhanced_status: outcome.enhancedStatus,
        refused: refused === null ? null : sealRefused(outcome.pk, JSON.stringify(refused)),
        // error and deferred_reason; the event's text is redacted by the event writer.
        reason: 'reason' in outcome ? redactedText(outcome.reason) : null,
        next_attempt_at: outcome.kind === 'deferred' ? outcome.nextAttemptAt : null,
        provider_message_id: outcome.kind === 'sent' ? providerIdOfReply(outcome.text) : null,
      });
      keepOrDiscard(files, outcome, row);
      if (row === undefined) continue;
      applied += 1;
      writeEvent({
        pk: row.pk,
        tenantId: row.tenant_id,
        id: row.id,
        accountId: row.account_id,
        batchCode: row.batch_code,
        type: outcome.kind === 'failed' ? (outcome.expired === true ? 'expired' : 'error') : outcome.kind,
        at: outcome.at,
        attempt: outcome.attempt,
        replyCode: outcome.replyCode,
        enhancedStatus: outcome.enhancedStatus,
        text: row.erased === 1 ? null : 'reason' in outcome ? outcome.reason : outcome.text,
        data: {
          ...(outcome.via === undefined ? {} : { via_account_id: outcome.via }),
          ...(outcome.kind === 'deferred' ? { next_attempt_ts: Math.floor(outcome.nextAttemptAt / 1000) } : {}),
          ...(refused === null || row.erased === 1 ? {} : { refused_recipients: refused }),
          ...(outcome.files === undefined ? {} : { offloaded_files: outcome.files.files.length }),
        },
      });
    }
    return applied;
  });

  return (outcomes: readonly RecordedOutcome[]): number => (outcomes.length === 0 ? 0 : record.immediate(outcomes));
}
