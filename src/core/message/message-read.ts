/** One message as the core reads it: the read model, its timeline, why it waits, its PEC receipts. */
import type { MessageDetail, MessageTimelineEvent } from './admin.js';
import type { PecReceiptListing } from '../pec/pec.js';
import type { WaitingExplanation } from './waiting-reasons.js';

export interface MessageRead {
  message: MessageDetail;
  events: MessageTimelineEvent[];
  why: WaitingExplanation;
  pecReceipts: PecReceiptListing[];
}
