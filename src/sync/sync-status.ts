/** `sync-status`: the report loop's view of each tenant, with its backlog, for operators and the tenant itself; and `sync-now`. */
import { ageSeconds, epochSeconds as ts, type Clock } from '../core/clock.js';
import type { ReportLane, ReportStore, ReportSync, SyncStatus } from '../core/report.js';
import type { ReportLoop } from './report-loop.js';

export function createReportSync(deps: { loop: ReportLoop; store: ReportStore; clock: Clock }): ReportSync {
  const { loop, store, clock } = deps;

  // From the stored lane (which carries the URL: no tenant secret is opened) and the loop's live state.
  const statusOf = (stored: ReportLane): SyncStatus => {
    const lane = loop.lanes().get(stored.tenantId);
    const record = lane?.record ?? stored.record;
    const backlog = store.backlog(stored.tenantId);
    const now = clock.now();
    const dndUntil = lane?.state.dndUntil ?? record.dndUntil;
    return {
      tenant_id: stored.tenantId,
      client_sync_url: stored.syncUrl,
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
      oldest_unreported_age_seconds: ageSeconds(backlog.oldestAt, now),
    };
  };

  return {
    get: (tenantId) => {
      const stored = store.lane(tenantId);
      return stored === null ? null : statusOf(stored);
    },
    list: () => store.lanes().map(statusOf),
    syncNow: (tenantId) => {
      if (store.lane(tenantId) === null) return false;
      loop.refresh(tenantId);
      return true;
    },
    log: (tenantId, limit) => (store.lane(tenantId) === null ? null : store.attempts(tenantId, limit)),
  };
}
