/** `sync-status`: the report loop's view of each tenant, with its backlog, for operators and the tenant itself; and `sync-now`. */
import type { Clock } from '../core/clock.js';
import type { TenantRepository } from '../core/ports.js';
import { syncUrl, type ReportStore, type SyncStatus, type ReportSync } from '../core/report.js';
import type { ReportLoop } from './report-loop.js';

const ts = (at: number | null): number | null => (at === null || !Number.isFinite(at) ? null : Math.floor(at / 1000));

export function createReportSync(deps: { loop: ReportLoop; store: ReportStore; tenants: Pick<TenantRepository, 'get'>; clock: Clock }): ReportSync {
  const { loop, store, clock } = deps;

  const get = (tenantId: string): SyncStatus | null => {
    const tenant = deps.tenants.get(tenantId);
    const stored = store.lane(tenantId);
    if (tenant === null || stored === null) return null;
    const lane = loop.lanes().get(tenantId);
    const record = lane?.record ?? stored.record;
    const backlog = store.backlog(tenantId);
    const now = clock.now();
    const dndUntil = lane?.state.dndUntil ?? record.dndUntil;
    return {
      tenant_id: tenantId,
      client_sync_url: syncUrl(tenant.clientBaseUrl, tenant.clientSyncPath),
      in_flight: lane?.round != null,
      last_attempt_ts: ts(record.lastAttemptAt),
      last_success_ts: ts(record.lastSuccessAt),
      last_error: record.lastError,
      last_error_ts: ts(record.lastErrorAt),
      consecutive_failures: record.failures,
      next_due_ts: lane === undefined || lane.round !== null ? null : ts(lane.dueAt),
      do_not_disturb_until_ts: dndUntil !== null && dndUntil > now ? ts(dndUntil) : null,
      backlog: backlog.count,
      oldest_unreported_ts: ts(backlog.oldestAt),
      oldest_unreported_age_seconds: backlog.oldestAt === null ? null : Math.max(0, Math.floor((now - backlog.oldestAt) / 1000)),
    };
  };

  return {
    get,
    list: () => store.lanes().flatMap((lane) => get(lane.tenantId) ?? []),
    syncNow: (tenantId) => {
      if (store.lane(tenantId) === null) return false;
      loop.refresh(tenantId);
      return true;
    },
  };
}
