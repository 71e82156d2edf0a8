/** A report attempt as GET /tenant/{id}/report-log answers it: snake_case, the instant in epoch seconds. */
import type { ReportAttempt } from '../../../core/report/index.js';

export function viewReportAttempt(attempt: ReportAttempt) {
  return {
    report_id: attempt.reportId,
    at_ts: Math.floor(attempt.at / 1000),
    ok: attempt.ok,
    http_status: attempt.httpStatus,
    error_code: attempt.errorCode,
    error: attempt.error,
    latency_ms: attempt.latencyMs,
    items: attempt.items,
  };
}
