/**
 * The delivery reports' gauges per tenant: the backlog its client has not
 * acknowledged, its age, and the rounds failed in a row.
 */
import { Gauge, type Registry } from 'prom-client';
import type { SyncStatus } from '../core/report/index.js';

/** `collect(statuses)` at each scrape sets the gauges to the report loop's status. */
export function registerReportGauges(registers: Registry[]): { collect(statuses: readonly SyncStatus[]): void } {
  const perTenant = (name: string, help: string): Gauge =>
    new Gauge({ name, help, labelNames: ['tenant_id'], registers });
  const reportGauges: Array<[Gauge, (status: SyncStatus) => number]> = [
    [perTenant('mailproxy_report_backlog', "Events not yet acknowledged by the tenant's client"), (s) => s.backlog],
    [
      perTenant(
        'mailproxy_report_oldest_unreported_age_seconds',
        'Age of the oldest event not yet acknowledged by the client',
      ),
      (s) => s.oldestUnreportedAgeSeconds ?? 0,
    ],
    [perTenant('mailproxy_report_consecutive_failures', 'Report rounds failed in a row'), (s) => s.consecutiveFailures],
  ];
  return {
    collect(statuses): void {
      for (const [metric, value] of reportGauges) {
        metric.reset();
        for (const status of statuses) metric.set({ tenant_id: status.tenantId }, value(status));
      }
    },
  };
}
