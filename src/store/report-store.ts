/**
 * SQLite side of delivery reports: each tenant's cursor into the outbox, the
 * backlog past it, the acknowledgement that moves it (schema migration 4), and the
 * log of attempts (report-log.ts).
 */
import type { BodySeal } from '../core/message/index.js';
import { EVENT_KEY_COLUMN, eventFieldOpener } from './event-fields.js';
import {
  syncUrl,
  type LaneRecord,
  type ReportableEvent,
  type ReportEvent,
  type ReportLane,
  type ReportStore,
} from '../core/report/index.js';
import { transactionRunner, type SqliteDatabase } from './database.js';
import { MESSAGE_EVENT_PREFIX, type MessageEventWriter } from './message-event-writer.js';
import { ORPHANED_SQL, REPORTABLE_SQL } from './outbox-predicates.js';
import { createSqliteReportLog } from './report-log.js';

const PAST_CURSOR = `tenant_id = @tenant AND ${REPORTABLE_SQL}
  AND seq > (SELECT cursor_seq FROM report_state WHERE tenant_id = @tenant)`;

interface LaneRow {
  tenant_id: string;
  client_base_url: string | null;
  client_sync_path: string;
  failures: number;
  retry_at: number | null;
  dnd_until: number | null;
  last_success_at: number | null;
  last_attempt_at: number | null;
  last_error: string | null;
  last_error_at: number | null;
}

interface EventRow {
  seq: number;
  id: string;
  event_type: string;
  tenant_id: string;
  message_pk: number;
  message_id: string;
  account_id: string | null;
  batch_code: string | null;
  attempt: number | null;
  occurred_at: number;
  text: string | null;
  payload: string | null;
  personal_key: Buffer | null;
}

const toLane = (row: LaneRow): ReportLane => ({
  tenantId: row.tenant_id,
  syncUrl: syncUrl(row.client_base_url, row.client_sync_path),
  record: {
    failures: row.failures,
    retryAt: row.retry_at,
    dndUntil: row.dnd_until,
    lastSuccessAt: row.last_success_at,
    lastAttemptAt: row.last_attempt_at,
    lastError: row.last_error,
    lastErrorAt: row.last_error_at,
  },
});

const toEvent = (row: EventRow, data: Record<string, unknown> | null): ReportEvent => ({
  seq: row.seq,
  eventId: row.id,
  type: row.event_type.slice(MESSAGE_EVENT_PREFIX.length) as ReportableEvent,
  tenantId: row.tenant_id,
  messagePk: row.message_pk,
  messageId: row.message_id,
  accountId: row.account_id,
  batchCode: row.batch_code,
  attempt: row.attempt ?? 0,
  at: row.occurred_at,
  text: row.text,
  data,
});

const recordParams = (tenantId: string, record: LaneRecord) => ({
  tenant: tenantId,
  failures: record.failures,
  retry_at: record.retryAt,
  dnd_until: record.dndUntil,
  last_success_at: record.lastSuccessAt,
  last_attempt_at: record.lastAttemptAt,
  last_error: record.lastError,
  last_error_at: record.lastErrorAt,
});

/** One `reported` event per message of the report, naming what it was told. */
function recordReported(
  writeEvent: MessageEventWriter,
  events: readonly ReportEvent[],
  at: number,
  reportId: string,
): void {
  const byMessage = new Map<number, ReportEvent[]>();
  for (const event of events) {
    const told = byMessage.get(event.messagePk);
    if (told === undefined) byMessage.set(event.messagePk, [event]);
    else told.push(event);
  }
  for (const told of byMessage.values()) {
    const last = told[told.length - 1] as ReportEvent;
    writeEvent({
      pk: last.messagePk,
      tenantId: last.tenantId,
      id: last.messageId,
      accountId: last.accountId ?? '',
      batchCode: last.batchCode,
      type: 'reported',
      at,
      attempt: last.attempt,
      data: {
        report_id: reportId,
        events: told.map((event) => event.type),
        event_ids: told.map((event) => event.eventId),
      },
    });
  }
}

/** A report names the recipient a bounce or a provider gave: opened from the event's seal. */
function openedEvents(seal: BodySeal): (row: EventRow) => ReportEvent {
  const open = eventFieldOpener(seal);
  return (row) =>
    toEvent(
      row,
      open({
        tenantId: row.tenant_id,
        eventId: row.id,
        data: row.payload === null ? null : (JSON.parse(row.payload) as Record<string, unknown>),
        key: row.personal_key,
      }),
    );
}

export function createSqliteReportStore(
  db: SqliteDatabase,
  writeEvent: MessageEventWriter,
  seal: BodySeal,
): ReportStore {
  const opened = openedEvents(seal);
  const inTransaction = transactionRunner(db);
  const log = createSqliteReportLog(db);
  const LANES = `SELECT t.id AS tenant_id, t.client_base_url, t.client_sync_path, r.failures, r.retry_at,
      r.dnd_until, r.last_success_at, r.last_attempt_at, r.last_error, r.last_error_at
    FROM tenants t JOIN report_state r ON r.tenant_id = t.id`;
  const lanes = db.prepare<[], LaneRow>(`${LANES} ORDER BY t.id`);
  const lane = db.prepare<[string], LaneRow>(`${LANES} WHERE t.id = ?`);
  const pending = db.prepare<
    { tenant: string; limit: number },
    EventRow
  >(`SELECT seq, id, event_type, tenant_id, message_pk, message_id,
      account_id, batch_code, attempt, occurred_at, text, payload, ${EVENT_KEY_COLUMN}
    FROM outbox WHERE ${PAST_CURSOR} ORDER BY seq LIMIT @limit`);
  const backlog = db.prepare<{ tenant: string }, { count: number; oldest_at: number | null }>(`SELECT count(*) AS count,
      (SELECT occurred_at FROM outbox WHERE ${PAST_CURSOR} ORDER BY seq LIMIT 1) AS oldest_at
    FROM outbox WHERE ${PAST_CURSOR}`);
  const saveLane =
    db.prepare(`UPDATE report_state SET failures = @failures, retry_at = @retry_at, dnd_until = @dnd_until,
      last_success_at = @last_success_at, last_attempt_at = @last_attempt_at, last_error = @last_error, last_error_at = @last_error_at
    WHERE tenant_id = @tenant`);
  const moveCursor = db.prepare(`UPDATE report_state SET cursor_seq = max(cursor_seq, @seq) WHERE tenant_id = @tenant`);
  // Only the outcome that was reported: a resend since then cleared sent_at/error_at and waits for its own report.
  const outcomeReported = db.prepare(`UPDATE messages SET reported_at = @now
    WHERE pk = @pk AND reported_at IS NULL AND ((state = 'sent' AND sent_at = @at) OR (state = 'error' AND error_at = @at))`);
  // Rows of this report whose message is gone and that the mirror has passed: nobody reads them again.
  const pruneOrphans =
    db.prepare(`DELETE FROM outbox WHERE seq IN (SELECT o.seq FROM outbox o WHERE o.tenant_id = @tenant AND o.${REPORTABLE_SQL}
    AND o.seq BETWEEN @from AND @to AND o.seq <= (SELECT cursor_seq FROM mirror_state WHERE id = 1) AND ${ORPHANED_SQL})`);
  const bounceReported = db.prepare(
    `UPDATE messages SET bounce_reported_at = @now WHERE pk = @pk AND bounce_at = @at AND bounce_reported_at IS NULL`,
  );

  const markMessages = (events: readonly ReportEvent[], now: number): void => {
    for (const event of events) {
      // A message erased while it waited ends in error at its erasure: `erased` is its outcome's report.
      if (event.type === 'sent' || event.type === 'error' || event.type === 'expired' || event.type === 'erased')
        outcomeReported.run({ now, pk: event.messagePk, at: event.at });
      else if (event.type === 'bounced') bounceReported.run({ now, pk: event.messagePk, at: event.at });
    }
  };

  return {
    lanes: () => lanes.all().map(toLane),
    lane: (tenantId) => {
      const row = lane.get(tenantId);
      return row === undefined ? null : toLane(row);
    },
    pending: (tenantId, limit) => pending.all({ tenant: tenantId, limit }).map(opened),
    backlog: (tenantId) => {
      const row = backlog.get({ tenant: tenantId });
      return { count: row?.count ?? 0, oldestAt: row?.oldest_at ?? null };
    },
    acknowledge: (tenantId, events, record, report) =>
      inTransaction(() => {
        const last = events[events.length - 1];
        if (last !== undefined) {
          moveCursor.run({ tenant: tenantId, seq: last.seq });
          markMessages(events, report.at);
          pruneOrphans.run({ tenant: tenantId, from: (events[0] as ReportEvent).seq, to: last.seq });
          if (report.reportId !== null) recordReported(writeEvent, events, report.at, report.reportId);
        }
        saveLane.run(recordParams(tenantId, record));
        if (report.attempt !== undefined) log.append(tenantId, report.attempt);
      }, 'immediate'),
    saveLane: (tenantId, record, attempt) => {
      if (attempt === undefined) return void saveLane.run(recordParams(tenantId, record));
      inTransaction(() => {
        saveLane.run(recordParams(tenantId, record));
        log.append(tenantId, attempt);
      }, 'immediate');
    },
    attempts: log.recent,
  };
}
