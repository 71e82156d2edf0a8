/**
 * Finding messages (GET /messages): the filters an operator asks "where is
 * it?" with, full text over subject, sender and recipients, and a stable
 * cursor for paging. The store answers; this is the query as data.
 */
import type { HandoffState, Priority } from './message.js';

/** The derived status of the API: the handoff state, or `suspended` while held, or `bounced` once returned. */
export type MessageStatus = HandoffState | 'suspended' | 'bounced';
export const MESSAGE_STATUSES: readonly MessageStatus[] = [
  'queued',
  'deferred',
  'sending',
  'sent',
  'error',
  'suspended',
  'bounced',
];

/** The API's status of a message: `suspended` while held, `bounced` once the remote side returned it (seed 004). */
export function messageStatus(state: HandoffState, suspended: boolean, bounced: boolean): MessageStatus {
  if (suspended && (state === 'queued' || state === 'deferred')) return 'suspended';
  return state === 'sent' && bounced ? 'bounced' : state;
}

export type MessageOrder = 'newest' | 'next_attempt';

/** What a search (and a bulk action) selects messages by: every field set narrows. */
export interface MessageFilter {
  /** Null: every tenant (the admin token only). */
  tenantId: string | null;
  status: MessageStatus | null;
  accountId: string | null;
  batchCode: string | null;
  /** An envelope recipient, whole address, any case. */
  recipient: string | null;
  /** The envelope sender, whole address, any case. */
  sender: string | null;
  /** Accepted at or after / before, epoch ms. */
  createdFrom: number | null;
  createdTo: number | null;
  priority: Priority | null;
  /** Words to find in subject, sender and recipients (all of them, the last one as a prefix). */
  text: string | null;
}

export interface MessageQuery extends MessageFilter {
  order: MessageOrder;
  limit: number;
  /** Where the previous page ended (opaque to clients). */
  after: MessageCursor | null;
}

export interface MessageCursor {
  pk: number;
  /** With order `next_attempt`: the next attempt of the last message of the page. */
  nextAttemptAt?: number | undefined;
}

/** One message in a search's page. Instants are epoch ms. */
export interface MessageSummary {
  pk: number;
  /** The client id. */
  clientId: string;
  tenantId: string;
  accountId: string;
  status: MessageStatus;
  state: HandoffState;
  priority: Priority;
  batchCode: string | null;
  subject: string | null;
  mailFrom: string;
  rcptTo: string[];
  attempts: number;
  createdAt: number;
  /** While it waits (queued or deferred); null otherwise. */
  nextAttemptAt: number | null;
  sentAt: number | null;
  errorAt: number | null;
  error: string | null;
  bounceType: string | null;
}

export interface MessageSearch {
  /**
   * At most `limit` summaries and, when more may follow, the cursor of the
   * next page. Full text (`text`) finds what the indexer has reached: a
   * message accepted in the last second or so may not be found by it yet.
   */
  find(query: MessageQuery): { messages: MessageSummary[]; next: MessageCursor | null };
  /** Adds up to `limit` messages accepted since the last call to the full-text index; how many. */
  index(limit: number): number;
}
