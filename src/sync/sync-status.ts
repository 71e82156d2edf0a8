/** `sync-status`: the report loop's view of each tenant, with its backlog, for operators and the tenant itself; and `sync-now`. */
import { ageSeconds, type Clock } from '../core/index.js';
import type { ReportLane, ReportStore, ReportSync, SyncStatus } from '../core/report/index.js';
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
      tenantId: stored.tenantId,
      clientSyncUrl: stored.syncUrl,
      inFlight: lane?.round != null,
      lastAttemptAt: record.lastAttemptAt,
      lastSuccessAt: record.lastSuccessAt,
      lastError: record.lastError,
      lastErrorAt: record.lastErrorAt,
      consecutiveFailures: record.failures,
      nextDueAt: lane === undefined || lane.round !== null ? null : lane.dueAt,
      doNotDisturbUntilAt: dndUntil !== null && dndUntil > now ? dndUntil : null,
      backlog: backlog.count,
      oldestUnreportedAt: backlog.oldestAt,
      oldestUnreportedAgeSeconds: ageSeconds(backlog.oldestAt, now),
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
