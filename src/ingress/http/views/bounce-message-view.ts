/** A handled bounce mailbox message as GET /bounces lists it: the core's listing in the API's snake_case and epoch seconds. */
import { epochSeconds } from '../../../core/index.js';
import type { BounceDisposition, BounceMessageListing, RecipientFinding } from '../../../core/bounce/index.js';

export interface BounceMessageView {
  seq: number;
  mailbox: string;
  uid: number;
  received_ts: number;
  header_message_id: string | null;
  from: string | null;
  subject: string | null;
  size_bytes: number;
  kind: string;
  disposition: BounceDisposition;
  unmatched_reason: string | null;
  tenant_id: string | null;
  message_id: string | null;
  matched_by: string | null;
  mail_id: string | null;
  original_message_id: string | null;
  recipients: RecipientFinding[];
  filed: boolean;
}

// Field order as the API has always answered it.
export function viewBounceMessage(b: BounceMessageListing): BounceMessageView {
  return {
    seq: b.seq,
    mailbox: b.mailbox,
    uid: b.uid,
    received_ts: epochSeconds(b.receivedAt) ?? 0,
    header_message_id: b.headerMessageId,
    from: b.from,
    subject: b.subject,
    size_bytes: b.sizeBytes,
    kind: b.kind,
    disposition: b.disposition,
    unmatched_reason: b.unmatchedReason,
    tenant_id: b.tenantId,
    message_id: b.clientId,
    matched_by: b.matchedBy,
    mail_id: b.mailId,
    original_message_id: b.originalMessageId,
    recipients: b.recipients,
    filed: b.filed,
  };
}
