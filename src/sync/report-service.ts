/**
 * Delivery reports as the daemon runs them: the loop, its HTTP transport, the
 * sync status the API shows, and the wake-up on every reportable event the
 * store writes. Stopped with the work in flight: a round being posted finishes
 * within the wait, then is aborted.
 */
import { REPORTABLE_EVENTS, type ReportSync } from '../core/report/index.js';
import type { Service } from '../runtime/index.js';
import { createReportLoop, type ReportLoop, type ReportLoopConfig, type ReportLoopDeps } from './report-loop.js';
import { createHttpReportTransport } from './report-transport.js';
import { createReportSync } from './sync-status.js';

/** How often tenants are re-read (new tenants, endpoints set or removed). */
const RESCAN_MS = 5000;

/** The loop's own deps but its transport (HTTP, made here) and settings; the signature comes from security/. */
export interface ReportServiceDeps extends Omit<ReportLoopDeps, 'transport' | 'config'> {
  /** Calls the listener for every outbox row the store writes. */
  onEvent(listener: (tenantId: string, eventType: string) => void): void;
}

export interface ReportService {
  loop: ReportLoop;
  status: ReportSync;
  service: Service;
}

export function createReportService(
  settings: Omit<ReportLoopConfig, 'rescanMs'>,
  deps: ReportServiceDeps,
): ReportService {
  const loop = createReportLoop({
    store: deps.store,
    tenants: deps.tenants,
    transport: createHttpReportTransport({ userAgent: 'mailproxy' }),
    sign: deps.sign,
    signatureHeader: deps.signatureHeader,
    clock: deps.clock,
    ids: deps.ids,
    random: deps.random,
    log: deps.log.child({ component: 'reports' }),
    telemetry: deps.telemetry,
    config: { ...settings, rescanMs: RESCAN_MS },
  });
  const reportable = new Set<string>(REPORTABLE_EVENTS.map((type) => `message.${type}`));
  deps.onEvent((tenantId, eventType) => {
    if (reportable.has(eventType)) loop.notify(tenantId);
    // A tenant created, changed or deleted: its lane follows now, not at the next rescan.
    else if (eventType.startsWith('tenant.')) loop.refresh(tenantId);
  });
  return {
    loop,
    status: createReportSync({ loop, store: deps.store, clock: deps.clock }),
    service: { name: 'reports', start: () => loop.start(), stop: (budget) => loop.stop(budget.waitLeft()) },
  };
}
