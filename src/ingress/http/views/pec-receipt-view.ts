/** A PEC receipt as GET /pec-receipts and GET /messages/{id} list it: the core's listing in the API's snake_case and epoch seconds. */
import { epochSeconds } from '../../../core/index.js';
import type { PecReceiptListing } from '../../../core/pec/index.js';

export interface PecReceiptView {
  receipt_id: string;
  tenant_id: string;
  account_id: string;
  /** The client's id of the message it is about, or null when none of ours fits it. */
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
  issued_ts: number | null;
  received_ts: number;
  size_bytes: number;
  complete: boolean;
  sha256: string;
}

// Field order as the API has always answered it.
export function viewPecReceipt(r: PecReceiptListing): PecReceiptView {
  return {
    receipt_id: r.receiptId,
    tenant_id: r.tenantId,
    account_id: r.accountId,
    message_id: r.clientId,
    receipt_type: r.receiptType,
    recognised_by: r.recognisedBy,
    matched_by: r.matchedBy,
    recipient: r.recipient,
    error: r.error,
    error_detail: r.errorDetail,
    issuer: r.issuer,
    identificativo: r.identificativo,
    referenced_message_id: r.referencedMessageId,
    header_message_id: r.headerMessageId,
    subject: r.subject,
    issued_ts: epochSeconds(r.issuedAt),
    received_ts: epochSeconds(r.receivedAt) ?? 0,
    size_bytes: r.sizeBytes,
    complete: r.complete,
    sha256: r.sha256,
  };
}
