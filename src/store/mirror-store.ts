/** SQLite side of the JetStream mirror: its cursor into the outbox, the backlog past it, pruning (schema migration 5). */
import type { MirrorRecord, MirrorStore, PendingEvent } from '../core/events/index.js';
import { PERSONAL_EVENT_FIELDS, PUBLISHED_EVENT_VERSION } from '../core/contracts/index.js';
import { transactionRunner, type SqliteDatabase } from './database.js';
import { ORPHANED_SQL } from './outbox-predicates.js';

interface Row {
  seq: number;
  id: string;
  event_type: string;
  tenant_id: string;
  message_pk: number | null;
  message_id: string | null;
  occurred_at: number;
  body: Buffer;
  bounce_type: string | null;
}

const toPending = (row: Row): PendingEvent => ({
  seq: row.seq,
  id: row.id,
  eventType: row.event_type,
  tenantId: row.tenant_id,
  messagePk: row.message_pk,
  messageId: row.message_id,
  occurredAt: row.occurred_at,
  body: row.body,
  bounceType: row.bounce_type,
});

/** The paths of the data fields an event leaves out (core/contracts/event.ts). */
const PERSONAL_PATHS = PERSONAL_EVENT_FIELDS.map((field) => `'$.${field}'`).join(', ');

/** `json`, with `column`'s value set at its key when the column is not null (as eventBody folds the reply into data). */
const setPresent = (json: string, column: string): string =>
  `CASE WHEN ${column} IS NULL THEN ${json} ELSE json_set(${json}, '$.${column}', ${column}) END`;

/**
 * The event body of core/contracts/event.ts `eventBody`, encoded by SQLite itself into UTF-8
 * bytes: the mirror then parses, restringifies and encodes nothing per event (reading the row,
 * `eventBody` and TextEncoder were a large share of the mirror's main-thread cost).
 * test/store/event-body.test.ts holds the two to the same bytes.
 */
const EVENT_BODY = `CAST(json_object('event_id', id, 'event_type', event_type, 'event_version', max(event_version, ${PUBLISHED_EVENT_VERSION}),
    'occurred_at', strftime('%Y-%m-%dT%H:%M:%S', occurred_at / 1000, 'unixepoch') || printf('.%03dZ', occurred_at % 1000),
    'tenant_id', tenant_id, 'message_id', message_id, 'message_pk', message_pk, 'account_id', account_id,
    'batch_code', batch_code, 'attempt', attempt, 'correlation_id', correlation_id,
    'data', ${setPresent(setPresent(`json_remove(json(coalesce(payload, '{}')), ${PERSONAL_PATHS})`, 'reply_code'), 'enhanced_status')}) AS BLOB)`;

const CURSOR = `(SELECT cursor_seq FROM mirror_state WHERE id = 1)`;
const OFF = '9223372036854775807';

export function createSqliteMirrorStore(db: SqliteDatabase): MirrorStore {
  const inTransaction = transactionRunner(db);
  const record = db.prepare<
    [],
    { cursor_seq: number; last_published_at: number | null; last_error: string | null; last_error_at: number | null }
  >(`SELECT cursor_seq, last_published_at, last_error, last_error_at FROM mirror_state WHERE id = 1`);
  // Only the columns the publisher reads besides the body: each column read costs, more than
  // the body that SQLite builds.
  // A bounce's type is read only for bounces: the latest state ranks a soft one below the verdicts.
  const pending = db.prepare<
    [number, number],
    Row
  >(`SELECT seq, id, event_type, tenant_id, message_pk, message_id, occurred_at, ${EVENT_BODY} AS body,
      CASE WHEN event_type = 'message.bounced' THEN json_extract(payload, '$.bounce_type') END AS bounce_type
    FROM outbox WHERE seq > max(${CURSOR}, ?) ORDER BY seq LIMIT ?`);
  // Rows past the cursor are never deleted and seq has no gaps (a rolled-back insert rolls its
  // sequence back too): the backlog is a subtraction, not a count over what may be millions of rows.
  const backlog = db.prepare<[], { count: number; oldest_at: number | null }>(`SELECT
      max(0, coalesce((SELECT max(seq) FROM outbox), 0) - ${CURSOR}) AS count,
      (SELECT occurred_at FROM outbox WHERE seq > ${CURSOR} ORDER BY seq LIMIT 1) AS oldest_at`);
  const advance = db.prepare(
    `UPDATE mirror_state SET cursor_seq = max(cursor_seq, @seq), last_published_at = @at WHERE id = 1`,
  );
  const pruneOrphans = db.prepare(
    `DELETE FROM outbox WHERE seq IN (SELECT o.seq FROM outbox o WHERE o.seq > @from AND o.seq <= @to AND ${ORPHANED_SQL})`,
  );
  const failed = db.prepare(`UPDATE mirror_state SET last_error = ?, last_error_at = ? WHERE id = 1`);
  // Off is a cursor past any row there will ever be: the deletion trigger and the pruning need no other case.
  const turnOff = db.prepare(`UPDATE mirror_state SET cursor_seq = ${OFF} WHERE id = 1`);
  const turnOn = db.prepare(
    `UPDATE mirror_state SET cursor_seq = (SELECT coalesce(max(seq), 0) FROM outbox) WHERE id = 1 AND cursor_seq = ${OFF}`,
  );
  const pruneAdmin = db.prepare(`DELETE FROM outbox WHERE seq IN (SELECT seq FROM outbox WHERE message_pk IS NULL
    AND seq <= ${CURSOR} AND occurred_at < ? ORDER BY seq LIMIT 10000)`);

  return {
    record: (): MirrorRecord => {
      const row = record.get();
      return {
        cursorSeq: row?.cursor_seq ?? 0,
        lastPublishedAt: row?.last_published_at ?? null,
        lastError: row?.last_error ?? null,
        lastErrorAt: row?.last_error_at ?? null,
      };
    },
    pending: (limit, after = 0) => pending.all(after, limit).map(toPending),
    backlog: () => {
      const row = backlog.get();
      return { count: row?.count ?? 0, oldestAt: row?.oldest_at ?? null };
    },
    advance: (seq, at) =>
      inTransaction(() => {
        const from = record.get()?.cursor_seq ?? 0;
        advance.run({ seq, at });
        // Rows of messages deleted before their publish: the deletion left them to us.
        pruneOrphans.run({ from, to: seq });
      }, 'immediate'),
    failed: (error, at) => {
      failed.run(error, at);
    },
    turnOff: () => {
      turnOff.run();
    },
    turnOn: () => {
      turnOn.run();
    },
    pruneAdminEvents: (before) => pruneAdmin.run(before).changes,
  };
}
