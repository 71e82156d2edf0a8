/**
 * What one message of a PEC mailbox means for our messages: which message a
 * receipt is about (correlation), what it sets on it, and the event the client
 * and the stream are told. Pure: the PEC handler looks candidates up and the
 * store writes the plan.
 */
import { normalizeAddress } from '../address.js';
import type { BounceDisposition, MailboxRecord, MessageCandidate, UnmatchedReason } from '../bounce/bounce.js';
import { correlateReferences, type Correlated } from '../bounce/correlation.js';
import type { PecMatchedBy, PecReceiptFindings, PecReceiptRecord, PecReceiptType } from './pec.js';

/** The `pec_event` of a missing acceptance: ours, not a receipt's. */
export const ACCEPTANCE_TIMEOUT = 'acceptance_timeout';

/** What a receipt sets on its message. */
export interface PecEffect {
  tenantId: string;
  messagePk: number;
  /** The client's id. */
  messageId: string;
  event: PecReceiptType;
  /** When the gestore says it happened, else when we read it: the time the message's fields certify. */
  at: number;
  /** When we read it: the event's time (the timeline's order, and the lag of mirror and reports, are ours). */
  receivedAt: number;
  /** Sets pec_rda_ts (the first acceptance stands) and ends the acceptance wait. */
  accepted: boolean;
  /** Sets pec_rdc_ts (the first delivery stands). */
  delivered: boolean;
  /** Sets pec_error and pec_error_ts (the latest error stands) and ends the acceptance wait. */
  error: string | null;
  /** The event's data: what the report item's `pec_details` carries. */
  details: Record<string, unknown>;
}

export interface PecPlan {
  disposition: BounceDisposition;
  unmatchedReason: UnmatchedReason | null;
  match: { candidate: MessageCandidate; by: PecMatchedBy } | null;
  /** Null for mail that is not a receipt: nothing is kept of it but the mailbox record. */
  effect: PecEffect | null;
}

export type PecLookup = (by: PecMatchedBy, value: string) => readonly MessageCandidate[];

export type PecCorrelation = Correlated<PecMatchedBy>;

/**
 * The strongest reference first: X-Genro-Mail-ID (ours, verbatim), then the
 * Message-ID the receipt refers to, then the gestore's identificativo an
 * earlier receipt of the same message gave. Several fitting messages (the same
 * client id in several tenants cannot happen in one account's mailbox, but a
 * Message-ID can repeat) are told apart by the receipt's recipients.
 */
export function correlateReceipt(findings: PecReceiptFindings, lookup: PecLookup): PecCorrelation {
  return correlateReferences<PecMatchedBy>(
    [
      ['mail_id', findings.mailId],
      ['message_id', findings.referencedMessageId],
      ['identificativo', findings.identificativo],
    ],
    lookup,
    [findings.recipient, ...findings.addressees.map((addressee) => addressee.address)],
  );
}

/** The receipts that end a recipient's (or the whole message's) certified journey in failure. */
const ERRORS: ReadonlySet<PecReceiptType> = new Set(['non-accettazione', 'errore-consegna', 'rilevazione-virus']);

const MAX_ERROR_LENGTH = 500;

/** The message's pec_error: what failed, for whom, in the gestore's words. */
function errorText(findings: PecReceiptFindings): string {
  const type = findings.type as PecReceiptType;
  const parts = [type, findings.recipient, findings.errorDetail ?? findings.error].filter(
    (part): part is string => part !== null && part !== '',
  );
  return parts.join(': ').slice(0, MAX_ERROR_LENGTH);
}

/** The recipient as the message spelled it, when the receipt names one of them. */
function ourRecipient(recipient: string | null, candidate: MessageCandidate): string | null {
  if (recipient === null) return null;
  const wanted = normalizeAddress(recipient);
  return candidate.rcptTo.find((address) => normalizeAddress(address) === wanted) ?? recipient;
}

/**
 * `receiptId` names the stored receipt (the download); `receivedAt` is when
 * we read it. A receipt nobody's message fits is kept as evidence all the same
 * (`unmatched`); mail that is no receipt is `not_bounce`.
 */
export function planReceipt(
  findings: PecReceiptFindings,
  correlation: PecCorrelation,
  receiptId: string,
  receivedAt: number,
): PecPlan {
  const type = findings.type;
  if (type === null) return { disposition: 'not_bounce', unmatchedReason: null, match: null, effect: null };
  if (!correlation.matched)
    return { disposition: 'unmatched', unmatchedReason: correlation.reason, match: null, effect: null };
  const { candidate, by } = correlation;
  const at = findings.issuedAt ?? receivedAt;
  const error = ERRORS.has(type) ? errorText(findings) : null;
  const effect: PecEffect = {
    tenantId: candidate.tenantId,
    messagePk: candidate.pk,
    messageId: candidate.id,
    event: type,
    at,
    receivedAt,
    accepted: type === 'accettazione',
    delivered: type === 'avvenuta-consegna',
    error,
    details: {
      pec_event: type,
      recipient: ourRecipient(findings.recipient, candidate),
      receipt_id: receiptId,
      error,
      error_code: findings.error,
      error_detail: findings.errorDetail,
      issuer: findings.issuer,
      identificativo: findings.identificativo,
      receipt_kind: findings.receiptKind,
      issued_ts: findings.issuedAt === null ? null : Math.floor(findings.issuedAt / 1000),
      received_ts: Math.floor(receivedAt / 1000),
      matched_by: by,
    },
  };
  return { disposition: 'processed', unmatchedReason: null, match: { candidate, by }, effect };
}

/** One message of a PEC mailbox as recorded: its mailbox record, and the receipt when it is one. */
export interface PecSettlement extends MailboxRecord {
  /** `pec_receipt`, `not_receipt` or `unreadable` in the mailbox record. */
  kind: 'pec_receipt' | 'not_receipt' | 'unreadable';
  plan: PecPlan;
  receipt: PecReceiptRecord | null;
}

/**
 * The store side of a PEC mailbox (its checkpoint and filing are the bounce
 * ledger's). `settle` records a batch in one durable transaction: each
 * receipt with its bytes, its effect and event, the mailbox record, the checkpoint.
 */
export interface PecLedger {
  /** Messages of `tenantId` a reference may name. */
  candidates(by: PecMatchedBy, value: string, tenantId: string): MessageCandidate[];
  settle(batch: readonly PecSettlement[], at: number): void;
}
