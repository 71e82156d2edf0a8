/**
 * Delivery reports for the daemon: the loop (sync/), its HTTP transport, the
 * signature (security/) and the wake-up on every reportable event the store writes.
 */
import type { Clock, IdSource } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { ReportTelemetry } from '../core/telemetry.js';
import { REPORTABLE_EVENTS } from '../core/report.js';
import type { Config } from '../config/index.js';
import { signReport, SIGNATURE_HEADER } from '../security/report-signature.js';
import type { SqliteStore } from '../store/index.js';
import { createReportLoop, type ReportLoop } from '../sync/report-loop.js';
import { createHttpReportTransport } from '../sync/report-transport.js';
import { createReportSync } from '../sync/sync-status.js';

const RESCAN_MS = 5000;

export function createReports(config: Readonly<Config>, store: SqliteStore, deps: { clock: Clock; ids: IdSource; log: Logger; random: () => number; telemetry?: ReportTelemetry }) {
  const { reports } = config;
  const loop: ReportLoop = createReportLoop({
    store: store.reports,
    tenants: store.tenants,
    transport: createHttpReportTransport({ userAgent: 'mailproxy' }),
    sign: signReport,
    signatureHeader: SIGNATURE_HEADER,
    clock: deps.clock,
    ids: deps.ids,
    random: deps.random,
    log: deps.log.child({ component: 'reports' }),
    telemetry: deps.telemetry,
    config: {
      policy: {
        syncIntervalMs: reports.sync_interval_seconds * 1000,
        retryInitialMs: reports.retry_initial_seconds * 1000,
        retryMaxMs: reports.retry_max_seconds * 1000,
        retryJitter: reports.retry_jitter,
        maxFollowups: reports.max_followup_rounds,
        maxHoldMs: reports.max_hold_seconds * 1000,
      },
      batchSize: reports.batch_size,
      requestTimeoutMs: reports.request_timeout_seconds * 1000,
      batchDelayMs: reports.batch_delay_ms,
      rescanMs: RESCAN_MS,
    },
  });
  const reportable = new Set<string>(REPORTABLE_EVENTS.map((type) => `message.${type}`));
  store.onEvent((tenantId, eventType) => {
    if (reportable.has(eventType)) loop.notify(tenantId);
    // A tenant created, changed or deleted: its lane follows now, not at the next rescan.
    else if (eventType.startsWith('tenant.')) loop.refresh(tenantId);
  });
  return { loop, status: createReportSync({ loop, store: store.reports, clock: deps.clock }) };
}
