/** Port of the operator commands on messages, and the read model of one message. */
import type { HandoffState, Priority } from './message.js';
import type { PecReceiptListing } from '../pec/pec.js';

/** One entry of a message's timeline: an outbox event as the message lived it. */
export interface MessageTimelineEvent {
  /** The event's type without the `message.` prefix (`queued`, `deferred`, `sent`, ...). */
  type: string;
  /** Epoch ms. */
  at: number;
  attempt: number;
  replyCode: number | null;
  enhancedStatus: string | null;
  text: string | null;
  /** The event's own data, as it was published. */
  data: Record<string, unknown> | null;
}

/** The read model of one message. Instants are epoch ms (`…At`); null: it has not happened. */
export interface MessageDetail {
  pk: number;
  /** The client id. */
  clientId: string;
  tenantId: string;
  accountId: string;
  priority: Priority;
  batchCode: string | null;
  source: 'http' | 'smtp';
  state: HandoffState;
  suspended: boolean;
  attempts: number;
  mailFrom: string;
  rcptTo: string[];
  subject: string | null;
  /** The Message-ID header. */
  messageId: string | null;
  sizeBytes: number;
  createdAt: number;
  updatedAt: number;
  /** While it waits (queued or deferred); null otherwise. */
  nextAttemptAt: number | null;
  deferredAt: number | null;
  deferredReason: string | null;
  /** The destination it is held for (per-destination limits) until `nextAttemptAt`; null otherwise. */
  heldFor: string | null;
  sentAt: number | null;
  errorAt: number | null;
  error: string | null;
  lastReplyCode: number | null;
  lastEnhancedStatus: string | null;
  refusedRecipients: unknown[] | null;
  reportedAt: number | null;
  bounceType: string | null;
  bounceCode: string | null;
  bounceReason: string | null;
  bounceAt: number | null;
  bounceReportedAt: number | null;
  /** A recipient's complaint (ARF feedback report) about it. */
  complaintAt: number | null;
  complaintType: string | null;
  /** The provider's side: its id of the message from the relay's 250 reply, and what its webhooks said last. */
  providerMessageId: string | null;
  providerState: string | null;
  providerStateAt: number | null;
  pecRdaAt: number | null;
  pecRdcAt: number | null;
  pecError: string | null;
  pecErrorAt: number | null;
  /** When its body's key was destroyed (retention or erasure): it can no longer be sent. */
  bodyShreddedAt: number | null;
  /** When its personal data was erased on request. */
  erasedAt: number | null;
}

export interface IdsOutcome {
  done: string[];
  notFound: string[];
  /** Ids whose state does not allow the command (in flight, still waiting, ...). */
  skipped: string[];
  /** Ids whose body was shredded (retention) or erased: nothing left to send. */
  gone?: string[];
}

export interface MessageAdmin {
  /** Adds the suspension and holds the matching waiting messages; answers how many. */
  suspend(tenantId: string, batchCode: string, at: number): number;
  /** Removes the suspension ('*' removes every suspension of the tenant); answers how many were released. */
  activate(tenantId: string, batchCode: string, at: number): number;
  /** Re-derives the hold of a tenant's waiting messages (after `active` changed). */
  refreshHolds(tenantId: string, at: number): void;
  suspensions(tenantId: string): string[];
  deleteMessages(tenantId: string, ids: readonly string[], at: number): IdsOutcome;
  resend(tenantId: string, ids: readonly string[], at: number, correlationId: string | null): IdsOutcome;
  /**
   * Destroys the data keys of final messages reported before `before` (body retention), one bounded
   * batch a call; answers how many (a full batch: there may be more). The messages stay, with `body_shredded_at`.
   */
  shredBodies(before: number, now: number): number;
  /**
   * Removes the sealed bytes of bodies whose key was destroyed (retention, erasure), one bounded
   * batch a call; answers how many. They are unreadable from the moment their key went.
   */
  removeShreddedBodies(): number;
  /**
   * Makes the next attempt of waiting messages `at` (a retry backoff or a scheduled time cut short);
   * skipped: a message that is not waiting for a later attempt (sent, failed, in flight, held, already due).
   */
  retryNow(tenantId: string, ids: readonly string[], at: number, correlationId: string | null): IdsOutcome;
  /** Deletes messages reported before `before` (and whose bounce, if any, was reported too). */
  removeReported(tenantId: string | null, before: number): number;
  /** The message, its timeline and its PEC receipts (in the order they arrived). */
  detail(
    tenantId: string,
    id: string,
  ): { message: MessageDetail; events: MessageTimelineEvent[]; pecReceipts: PecReceiptListing[] } | null;
}
