/** A tenant's reporting as GET /tenant/{id}/sync-status and GET /sync-status answer it: the core's SyncStatus in the API's snake_case and epoch seconds. */
import { epochSeconds } from '../../../core/index.js';
import type { SyncStatus } from '../../../core/report/index.js';

export interface SyncStatusView {
  tenant_id: string;
  client_sync_url: string | null;
  in_flight: boolean;
  last_attempt_ts: number | null;
  last_success_ts: number | null;
  last_error: string | null;
  last_error_ts: number | null;
  consecutive_failures: number;
  next_due_ts: number | null;
  do_not_disturb_until_ts: number | null;
  backlog: number;
  oldest_unreported_ts: number | null;
  oldest_unreported_age_seconds: number | null;
}

// Field order as the API has always answered it.
export function viewSyncStatus(s: SyncStatus): SyncStatusView {
  return {
    tenant_id: s.tenantId,
    client_sync_url: s.clientSyncUrl,
    in_flight: s.inFlight,
    last_attempt_ts: epochSeconds(s.lastAttemptAt),
    last_success_ts: epochSeconds(s.lastSuccessAt),
    last_error: s.lastError,
    last_error_ts: epochSeconds(s.lastErrorAt),
    consecutive_failures: s.consecutiveFailures,
    next_due_ts: epochSeconds(s.nextDueAt),
    do_not_disturb_until_ts: epochSeconds(s.doNotDisturbUntilAt),
    backlog: s.backlog,
    oldest_unreported_ts: epochSeconds(s.oldestUnreportedAt),
    oldest_unreported_age_seconds: s.oldestUnreportedAgeSeconds,
  };
}
