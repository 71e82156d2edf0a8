/**
 * The delivery-report log: each attempt of posting a report (or a heartbeat) to a tenant's
 * client, as operators read it when a client says it heard nothing. Bounded per tenant.
 */
import type { ReportFailureCode } from './report.js';

/** How many attempts are kept per tenant, newest first. */
export const REPORT_LOG_SIZE = 200;

export interface ReportAttempt {
  /** The `x-mailproxy-report-id` header the post carried. */
  reportId: string;
  at: number;
  /** The client acknowledged (2xx with `"ok": true`). */
  ok: boolean;
  /** The client's HTTP status; null when no answer came (refused, timeout). */
  httpStatus: number | null;
  errorCode: ReportFailureCode | null;
  error: string | null;
  latencyMs: number;
  /** Items in the report; 0 for a heartbeat. */
  items: number;
}
