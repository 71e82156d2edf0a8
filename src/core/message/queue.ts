/**
 * The queue port: how core and the dispatcher see the store's messages.
 * Every method that changes a message writes its timeline event and its
 * outbox event in the same transaction.
 */
import type { Priority, HandoffState, NewMessage } from './message.js';
import type { OffloadedFiles } from './attachment-offload.js';
import type { SealedFields } from './sealed-body.js';
import type { Usage } from '../account/rate-limit.js';
import type { RecipientRefusal } from '../delivery/relay.js';
import type { DestinationBudget } from '../delivery/destination-budget.js';

export interface ClaimedMessage {
  pk: number;
  tenantId: string;
  id: string;
  accountId: string;
  priority: Priority;
  batchCode: string | null;
  /** Including this attempt. */
  attempts: number;
  createdAt: number;
  /** When it became due: accepted, its scheduled time, or its retry instant (for the queue wait). */
  dueAt: number;
  /** How the body reads: an HTTP submission's MessagePayload (JSON), built where the message is built; SMTP bytes, relayed as they are. */
  source: 'http' | 'smtp';
  /** The body as stored, sealed under `key`; null for a spooled one (read just before sending, so that waiting messages hold no bytes). */
  body: Buffer | null;
  /** The body's data key, wrapped; empty when it was shredded; null when the body was stored in clear (before bodies were sealed). */
  key: Buffer | null;
  /** The Message-ID fixed at submission (it is not inside the payload). */
  messageIdHeader: string | null;
  /** The spool that holds a large SMTP submission's parts. */
  spoolId: number | null;
  /** The body store's object that holds the sealed body (then `body` is null), read just before sending. */
  object?: string;
  /**
   * Its envelope, opened from its sealed personal fields the first time it is asked for (then kept).
   * An HTTP submission's relay builds the envelope from the payload where the message is composed,
   * so most claims never open one on the main thread.
   */
  envelope(): { mailFrom: string; rcptTo: string[] };
  /**
   * The same envelope as stored, sealed under its own data key (wrapped), for the thread that
   * relays an SMTP submission to open; null when it is kept in clear (a row from before sealing)
   * or its key is gone.
   */
  sealedEnvelope: SealedFields | null;
  /** The fallback account whose relay sends it (failover); absent when its own account's does. */
  viaAccountId?: string;
  /** The limited destinations among its recipients (their sends in flight are capped); absent: none. */
  destinations?: string[];
}

interface OutcomeBase {
  pk: number;
  /** The attempt this outcome ends: a stale outcome (lease reclaimed meanwhile) is ignored. */
  attempt: number;
  at: number;
  replyCode: number | null;
  enhancedStatus: string | null;
  /** The fallback account whose relay answered (failover); absent for the message's own. */
  via?: string;
  /**
   * The attachments the attempt's message carried as download links (attachment-offload.ts): their
   * links live from a `sent` outcome on; any other outcome's files are removed.
   */
  files?: OffloadedFiles;
}

export type RecordedOutcome =
  | (OutcomeBase & { kind: 'sent'; text: string; refused: RecipientRefusal[] })
  | (OutcomeBase & { kind: 'deferred'; nextAttemptAt: number; reason: string })
  /** `expired`: no attempt succeeded within the maximum age (its event is `expired`, not `error`). */
  | (OutcomeBase & { kind: 'failed'; reason: string; refused: RecipientRefusal[]; expired?: boolean })
  /** Back to the queue without spending the attempt (account paused, shutting down). */
  | (OutcomeBase & { kind: 'released'; reason: string });

export interface ClaimRequest {
  tenantId: string;
  accountId: string;
  limit: number;
  /** Claim only priorities 0..maxPriority (default 3, all). */
  maxPriority?: number;
  now: number;
  leaseOwner: string;
  leaseUntil: number;
  /** Failover: the fallback account whose relay sends what is claimed; its windows count them, not the account's own. */
  via?: string;
  /**
   * Per-destination limits of the relay's account: each due message is claimed or held (queued, no
   * attempt spent) as it decides; what it admitted counts in the destinations' windows.
   */
  destinations?: DestinationBudget;
}

export interface EnqueueResult<M extends NewMessage = NewMessage> {
  inserted: number;
  updated: number;
  /** Messages whose client id belongs to one no longer waiting (handed off or finished): not written. */
  notWaiting: M[];
}

export interface MessageQueue {
  /** Current handoff state of the given client ids of a tenant. */
  states(tenantId: string, ids: readonly string[]): Map<string, HandoffState>;
  /** Addresses (normalized) of `addresses` that are on the tenant's suppression list now. */
  suppressed(tenantId: string, addresses: readonly string[], now: number): Set<string>;
  /**
   * Inserts new messages, replaces waiting ones with the same client id, leaves
   * alone (and reports) those whose id is no longer waiting; all or
   * nothing. Inside a store transaction it is part of that one (no savepoint of
   * its own): a caller that goes on after it threw must have opened a savepoint.
   */
  enqueue<M extends NewMessage>(messages: readonly M[], now: number, correlationId: string | null): EnqueueResult<M>;
  /** Leases the next due messages of one account, strict priority then due time then insertion. */
  claim(request: ClaimRequest): ClaimedMessage[];
  record(outcomes: readonly RecordedOutcome[]): number;
  /**
   * Returns expired leases (and, at start, every lease of another owner) to the
   * queue; never the messages in `held`, which this process still has in hand.
   */
  reclaimLeases(now: number, owner: string, otherOwnersToo: boolean, held?: readonly number[]): number;
  /**
   * Returns every lease of `owner` to the queue at once: a stop whose deadline
   * came before the relay answered. The attempt counts (the relay may have the
   * message); a late outcome for it is dropped.
   */
  handBack(owner: string, now: number): number;
  /** Of these messages, those erased (POST /commands/erase): claimed ones must not be sent. */
  erasedOf(pks: readonly number[]): Set<number>;
  /** A spooled submission's parts in order (MessageSpool), and their key as ClaimedMessage.key. */
  spooledContent(spoolId: number): { key: Buffer | null; parts: Buffer[] };
  /** Earliest next attempt among the account's dispatchable messages. */
  nextDueAt(tenantId: string, accountId: string): number | null;
  usage(tenantId: string, accountId: string, now: number): Usage;
  /** Claimed in the windows that contain `now`, per destination of the account (absent: none). */
  destinationUsage(tenantId: string, accountId: string, now: number): Map<string, Usage>;
  pauseAccount(tenantId: string, accountId: string, at: number, reason: string): void;
}

/**
 * Where a large SMTP submission is written while it arrives, a part at a time,
 * so that memory does not grow with the message. A spool belongs to the message
 * that names it (MessageContent `spooled`) once that message is committed.
 */
export interface MessageSpool {
  /** A new, empty spool for a message of `tenantId` (its parts are sealed under a key of its own). */
  open(now: number, tenantId: string): number;
  /** Appends the next part; `seq` counts from 0. */
  append(spoolId: number, seq: number, bytes: Uint8Array): void;
  /** Forgets a spool that no message took (the transfer was abandoned or refused). */
  discard(spoolId: number): void;
  /** Discards spools created before `before` that no message names; answers how many. */
  sweep(before: number): number;
}
