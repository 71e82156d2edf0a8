/**
 * SQLite side of the delivery-report log (schema migration 13): an attempt is appended in the
 * transaction that records the round's outcome, and the tenant's rows past the newest
 * REPORT_LOG_SIZE are pruned with it, so the table stays bounded without a loop of its own.
 */
import { REPORT_LOG_SIZE, type ReportAttempt, type ReportFailureCode } from '../core/report/index.js';
import type { SqliteDatabase } from './database.js';

interface AttemptRow {
  report_id: string;
  attempted_at: number;
  ok: number;
  http_status: number | null;
  error_code: string | null;
  error: string | null;
  latency_ms: number;
  items: number;
}

const toAttempt = (row: AttemptRow): ReportAttempt => ({
  reportId: row.report_id,
  at: row.attempted_at,
  ok: row.ok === 1,
  httpStatus: row.http_status,
  errorCode: row.error_code as ReportFailureCode | null,
  error: row.error,
  latencyMs: row.latency_ms,
  items: row.items,
});

export function createSqliteReportLog(db: SqliteDatabase) {
  const insert =
    db.prepare(`INSERT INTO report_attempts (tenant_id, report_id, attempted_at, ok, http_status, error_code, error, latency_ms, items)
    VALUES (@tenant, @report_id, @at, @ok, @http_status, @error_code, @error, @latency_ms, @items)`);
  const prune = db.prepare(`DELETE FROM report_attempts WHERE tenant_id = @tenant AND id <= (
      SELECT id FROM report_attempts WHERE tenant_id = @tenant ORDER BY id DESC LIMIT 1 OFFSET ${REPORT_LOG_SIZE})`);
  const recent = db.prepare<
    { tenant: string; limit: number },
    AttemptRow
  >(`SELECT report_id, attempted_at, ok, http_status, error_code, error,
      latency_ms, items FROM report_attempts WHERE tenant_id = @tenant ORDER BY id DESC LIMIT @limit`);
  return {
    /** Call inside the round's transaction. */
    append(tenantId: string, attempt: ReportAttempt): void {
      insert.run({
        tenant: tenantId,
        report_id: attempt.reportId,
        at: attempt.at,
        ok: attempt.ok ? 1 : 0,
        http_status: attempt.httpStatus,
        error_code: attempt.errorCode,
        error: attempt.error,
        latency_ms: Math.max(0, Math.round(attempt.latencyMs)),
        items: attempt.items,
      });
      prune.run({ tenant: tenantId });
    },
    /** The tenant's newest attempts first. */
    recent: (tenantId: string, limit: number): ReportAttempt[] =>
      recent.all({ tenant: tenantId, limit: Math.min(limit, REPORT_LOG_SIZE) }).map(toAttempt),
  };
}
