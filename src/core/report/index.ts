/** The face of src/core/report: what the rest of the product uses of it. */
export { afterFailure, afterSuccess, nextRoundAt } from './report-schedule.js';
export type { LaneState, ReportPolicy } from './report-schedule.js';
export { REPORTABLE_EVENTS, REPORT_LOG_SIZE, interpretReply, syncUrl } from './report.js';
export type {
  ClientReply,
  LaneRecord,
  ReportAttempt,
  ReportEvent,
  ReportFailureCode,
  ReportLane,
  ReportStore,
  ReportSync,
  ReportTarget,
  ReportTransport,
  ReportableEvent,
  SyncStatus,
} from './report.js';
