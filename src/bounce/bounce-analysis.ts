/**
 * What the bounce parser reports: the kind of message and, for a bounce, one
 * verdict per failed recipient. Consumed by the IMAP poller and the CLI; fields
 * may be added, never renamed or removed.
 */
import type { BounceReason } from '../core/bounce/index.js';

export interface RecipientVerdict {
  /** The address we sent to, as far as the bounce tells: always a mailbox (user@domain), or null. */
  recipient: string | null;
  /** Other addresses the bounce gives for the same recipient (the mailbox a forward or an alias reached). */
  alternates: string[];
  action: string | null;
  status: string | null;
  replyCode: string | null;
  diagnostic: string | null;
  remoteMta: string | null;
  bounceType: 'hard' | 'soft' | null;
  reason: BounceReason | null;
}

export type BounceKind = 'bounce' | 'delayed' | 'complaint' | 'auto_reply' | 'delivered' | 'not_bounce';

/** How the verdict was read: an RFC 3464 report, a bounce in other words, an ARF report, an auto-reply, or none. */
export type BounceMethod = 'dsn' | 'heuristic' | 'arf' | 'autoreply' | 'none';

export interface BounceAnalysis {
  kind: BounceKind;
  method: BounceMethod;
  recipients: RecipientVerdict[];
  originalMessageId: string | null;
  mailId: string | null;
  originalEnvelopeId: string | null;
  feedbackType: string | null;
}
