/**
 * Bounces and complaints tied back to our messages: what the bounce room finds
 * in a mailbox, what it means for the message and the tenant's suppression
 * list, and the store port that records it all in one transaction.
 */

/** A bounce tied back to one of our messages: what the bounce room finds and the store records. */
export interface BounceRecord {
  tenantId: string;
  /** The client id of the message. */
  clientId: string;
  type: 'hard' | 'soft';
  /** The reply code (550) or, when the bounce gave none, the enhanced status (5.1.1). */
  code: string | null;
  reason: string | null;
  /** The bounced recipient, when the bounce names it. */
  recipient: string | null;
  at: number;
  /** More for the event: enhanced status, reason category, DSN action, where it came from. */
  details?: Record<string, unknown>;
}

/** A recipient's complaint (an ARF feedback report) about one of our messages. */
export interface ComplaintRecord {
  tenantId: string;
  /** The client id of the message. */
  clientId: string;
  /** ARF Feedback-Type: abuse, fraud, virus, other... */
  feedbackType: string | null;
  recipient: string | null;
  at: number;
  details?: Record<string, unknown>;
}

/** `unsubscribe`: the recipient asked, by a one-click link (core/tenant/list-unsubscribe.ts). */
export type SuppressionSource = 'manual' | 'bounce' | 'complaint' | 'unsubscribe';

export interface SuppressionRecord {
  tenantId: string;
  /** Normalized (core/address.ts normalizeAddress). */
  address: string;
  reason: string | null;
  source: SuppressionSource;
  createdAt: number;
  /** Null: until removed. */
  expiresAt: number | null;
}

export interface BounceStore {
  /**
   * Sets the message's bounce fields (the latest bounce wins, except that a
   * soft bounce never replaces a hard one) and writes its `bounced` event,
   * which the client is then told of. False when the message does not exist
   * (any more) or the bounce changed nothing.
   */
  record(bounce: BounceRecord): boolean;
}

/** What a message in the bounce mailbox turned out to be (bounce/bounce-parser.ts decides). */
export type FindingKind = 'bounce' | 'delayed' | 'complaint' | 'auto_reply' | 'delivered' | 'not_bounce' | 'unreadable';

/** One recipient's verdict, in core terms. */
export interface RecipientFinding {
  recipient: string | null;
  /**
   * Other addresses the bounce gives for the same recipient (a Final-Recipient
   * after forwarding, the returned original's envelope), matched against the
   * message's envelope. Absent in findings recorded before they were kept.
   */
  alternates?: readonly string[];
  /** DSN Action: failed, delayed, delivered... */
  action: string | null;
  bounceType: 'hard' | 'soft' | null;
  enhancedStatus: string | null;
  replyCode: string | null;
  reason: string | null;
  diagnostic: string | null;
}

export interface BounceFindings {
  kind: FindingKind;
  recipients: RecipientFinding[];
  /** X-Genro-Mail-ID of the returned original. */
  mailId: string | null;
  /** Message-ID of the returned original. */
  originalMessageId: string | null;
  originalEnvelopeId: string | null;
  feedbackType: string | null;
  /** The message a VERP address the bounce was sent back to names (core/bounce/verp.ts). */
  verpMessagePk: number | null;
}

/** Where a handled mailbox message is filed: its folder, or its flag when no folder is set. */
export type BounceDisposition = 'processed' | 'unmatched' | 'not_bounce';

/** A message we sent that a bounce may be about. */
export interface MessageCandidate {
  tenantId: string;
  pk: number;
  /** The client's id. */
  id: string;
  rcptTo: readonly string[];
}

export type MatchedBy = 'mail_id' | 'message_id' | 'verp';

export type UnmatchedReason =
  /** The bounce names neither an X-Genro-Mail-ID nor a Message-ID. */
  | 'no_reference'
  /** It names them, but no message of ours (any more) has them. */
  | 'not_found'
  /** Several messages (of different tenants) fit and the recipients do not tell them apart. */
  | 'ambiguous';

/** What is kept of any message of a watched mailbox (bounce or PEC): where it is, and how it presented itself. */
export interface MailboxRecord {
  /** The mailbox's name (`default`, `tenant:<id>`, `pec:<tenant>/<account>`). */
  mailbox: string;
  uidValidity: number;
  uid: number;
  /** The Message-ID of the message itself: recognises it again should UIDVALIDITY change. */
  headerMessageId: string | null;
  from: string | null;
  subject: string | null;
  sizeBytes: number;
}

/** One message of a bounce mailbox, with what the parser found in it. */
export interface MailboxItem extends MailboxRecord {
  findings: BounceFindings;
}

/** What the bounce room records for one mailbox message, decided by core/bounce/plan.ts. */
export interface BouncePlan {
  disposition: BounceDisposition;
  unmatchedReason: UnmatchedReason | null;
  match: { candidate: MessageCandidate; by: MatchedBy } | null;
  bounces: BounceRecord[];
  complaints: ComplaintRecord[];
  suppressions: SuppressionRecord[];
}

export interface MailboxCheckpoint {
  uidValidity: number;
  lastUid: number;
}

/**
 * The store side of the bounce mailbox. `settle` writes the whole effect of
 * a batch of mailbox messages (message fields and events, suppressions, the
 * record of each mailbox message, the checkpoint) in one durable transaction;
 * only then are they moved or flagged in the mailbox, and `markFiled` notes that.
 */
export interface BounceLedger {
  checkpoint(mailbox: string): MailboxCheckpoint | null;
  /** A new UIDVALIDITY (or a first connection): counting starts again from 0. */
  resetCheckpoint(mailbox: string, uidValidity: number, at: number): void;
  /** Candidates by X-Genro-Mail-ID (the client's id) or by Message-ID, in `tenantId` only when given. */
  candidates(by: MatchedBy, value: string, tenantId: string | null): MessageCandidate[];
  /**
   * How this mailbox filed an earlier message with the same Message-ID (under
   * any UIDVALIDITY), or null: a copy of a bounce already handled has no effect again.
   */
  previousDisposition(mailbox: string, headerMessageId: string): BounceDisposition | null;
  /** A batch of mailbox messages, in UID order, in one durable transaction; the checkpoint moves past the last. */
  settle(batch: ReadonlyArray<{ item: MailboxItem; plan: BouncePlan }>, at: number): void;
  /** Committed but not yet moved or flagged (a crash came between): filed again on the next connection. */
  unfiled(mailbox: string, uidValidity: number): Array<{ uid: number; disposition: BounceDisposition }>;
  markFiled(mailbox: string, uidValidity: number, uids: readonly number[], at: number): void;
  /** Newest first, before `before` (a `seq`). */
  list(filter: {
    disposition: BounceDisposition | null;
    tenantId: string | null;
    before: number | null;
    limit: number;
  }): BounceMessageListing[];
  /** Forgets mailbox messages handled before `before` (the messages stay in the mailbox); how many. */
  prune(before: number): number;
}

/** A handled mailbox message as it is read back. */
export interface BounceMessageListing {
  seq: number;
  mailbox: string;
  uid: number;
  /** Epoch ms. */
  receivedAt: number;
  /** Its own Message-ID header. */
  headerMessageId: string | null;
  from: string | null;
  subject: string | null;
  sizeBytes: number;
  kind: string;
  disposition: BounceDisposition;
  unmatchedReason: string | null;
  tenantId: string | null;
  /** The client id of the message it was tied to, or null when none. */
  clientId: string | null;
  matchedBy: string | null;
  /** The X-Genro-Mail-ID the returned original carried, as it was read. */
  mailId: string | null;
  /** The Message-ID header of the returned original. */
  originalMessageId: string | null;
  recipients: RecipientFinding[];
  filed: boolean;
}

/** What a bounce mailbox poller is doing, for /bounce/status, /ready and /metrics. */
export type PollerState = 'stopped' | 'connecting' | 'reading' | 'waiting' | 'backoff';

export interface MailboxStatus {
  mailbox: string;
  tenant_id: string | null;
  state: PollerState;
  connected: boolean;
  idle: boolean;
  uid_validity: number | null;
  last_uid: number | null;
  last_round_at: number | null;
  last_error: string | null;
  last_error_at: number | null;
  failures: number;
  next_attempt_at: number | null;
  handled: Record<BounceDisposition, number>;
  unreadable: number;
}
