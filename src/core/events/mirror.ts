/**
 * The event mirror (ARCHITECTURE.md §4.6): the outbox row and the store side the
 * publisher needs. What a row becomes on the stream is core/contracts/event.ts. Pure.
 */

/** One outbox row as the publisher reads it (instants in ms). */
export interface OutboxRow {
  seq: number;
  /** Event id (UUIDv7): the `Nats-Msg-Id`, so a row published twice is stored once. */
  id: string;
  eventType: string;
  eventVersion: number;
  tenantId: string;
  messagePk: number | null;
  messageId: string | null;
  accountId: string | null;
  batchCode: string | null;
  attempt: number | null;
  replyCode: number | null;
  enhancedStatus: string | null;
  text: string | null;
  /** JSON `data` as stored. */
  payload: string | null;
  occurredAt: number;
  correlationId: string | null;
}

export interface MirrorRecord {
  cursorSeq: number;
  lastPublishedAt: number | null;
  lastError: string | null;
  lastErrorAt: number | null;
}

/**
 * A row waiting for its publish: what its subject, its `Nats-Msg-Id` and its message's latest
 * state are made of, and the event it is published as, already encoded.
 */
export interface PendingEvent extends Pick<
  OutboxRow,
  'seq' | 'id' | 'eventType' | 'tenantId' | 'messagePk' | 'messageId' | 'occurredAt'
> {
  /** The event's JSON in UTF-8, exactly as contracts/event.ts `eventBody` writes it for the row. */
  body: Uint8Array;
  /** A `message.bounced` event's `bounce_type`, for its latest state (a soft bounce is no verdict); else null. */
  bounceType: string | null;
}

/** The store side of the mirror. */
export interface MirrorStore {
  record(): MirrorRecord;
  /** The next `limit` rows past the cursor, in order; past `after` too when given (a window read but not yet acknowledged). */
  pending(limit: number, after?: number): PendingEvent[];
  /** How far behind the stream is. */
  backlog(): { count: number; oldestAt: number | null };
  /**
   * Moves the cursor to `seq` (every row up to it has its PubAck) and removes
   * the rows up to it whose message is gone and that no report still needs.
   */
  advance(seq: number, at: number): void;
  failed(error: string, at: number): void;
  /** The mirror is off: every row counts as published, so that none waits for a publish. */
  turnOff(): void;
  /** The mirror is on: after a time off it publishes from the newest row on. */
  turnOn(): void;
  /** Removes admin events (no message) older than `before` that the mirror has passed; answers how many. */
  pruneAdminEvents(before: number): number;
}

/** What `/mirror/status` and `/ready` show of the mirror. */
export interface MirrorStatus {
  enabled: boolean;
  /** `off`, `connecting`, `connected` (publishing), `disconnected` (retrying), `conflict` (the stream is not ours to use). */
  state: 'off' | 'connecting' | 'connected' | 'disconnected' | 'conflict';
  stream: string | null;
  backlog: number;
  oldest_unpublished_ts: number | null;
  oldest_unpublished_age_seconds: number | null;
  published_total: number;
  last_published_ts: number | null;
  last_error: string | null;
  last_error_ts: number | null;
  /** Commands over JetStream since the start, and the consumer's lag (null until first known); null when they are off. */
  commands: { handled: number; dead_lettered: number; waiting: number | null } | null;
}
