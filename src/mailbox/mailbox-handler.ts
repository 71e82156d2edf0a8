/**
 * What a kind of mailbox (the bounce mailbox, a PEC mailbox) gives the
 * mailbox watcher: how to understand, plan, settle and file its messages.
 */
import type { BounceDisposition, MailboxRecord } from '../core/bounce/index.js';
import type { HeaderSummary } from './mailbox-reading.js';

export interface WatcherConfig {
  pollIntervalMs: number;
  batchSize: number;
  reconnectInitialMs: number;
  reconnectMaxMs: number;
}

/** What a handler makes of one message: its filing, and what it records (`value`, the handler's own). */
export interface Handled<T> {
  uid: number;
  disposition: BounceDisposition;
  /** Nothing to move or flag (ours already, or gone meanwhile): only the checkpoint moves past it. */
  filed?: boolean;
  /** The message could not be understood (counted in the status, filed for a human). */
  unreadable?: boolean;
  value: T;
}

export interface MessageToPlan<R> {
  uidValidity: number;
  uid: number;
  size: number;
  raw: Buffer;
  headers: HeaderSummary;
  understood: R;
  /** How an earlier message with the same Message-ID was filed (a copy has no effect again), or null. */
  copyOf: BounceDisposition | null;
}

export function filedMessage(
  mailbox: string,
  message: Pick<MessageToPlan<unknown>, 'uidValidity' | 'uid' | 'size' | 'headers'>,
): MailboxRecord {
  const { uidValidity, uid, size, headers } = message;
  return {
    mailbox,
    uidValidity,
    uid,
    headerMessageId: headers.messageId,
    from: headers.from,
    subject: headers.subject,
    sizeBytes: size,
  };
}

/** What a kind of mailbox does with its messages. */
export interface MailboxHandler<R, T> {
  /** How much of each message is read. */
  maxMessageBytes: number;
  /** Starts understanding one message: a group's messages are started together (the parser thread takes them in one hop). */
  understand(raw: Buffer): Promise<R>;
  plan(message: MessageToPlan<R>): Handled<T>;
  /** A message skipped unread: ours already (a keyword from before a lost checkpoint) or gone meanwhile. */
  skip(uidValidity: number, uid: number, size: number): Handled<T>;
  /** The whole batch in one durable transaction; the checkpoint moves past its last. */
  settle(batch: ReadonlyArray<Handled<T>>, at: number): void;
  /** Told of each message filed after the batch committed (for logs and counters). */
  filed?(handled: Handled<T>): void;
}
