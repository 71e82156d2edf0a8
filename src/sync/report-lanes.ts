/**
 * The report loop's lanes: one per tenant, what the loop knows of it beyond
 * what is stored, made and dropped as tenants come and go.
 */
import type { LaneState, LaneRecord, ReportLane } from '../core/report/index.js';

/** What the loop knows of one tenant beyond what is stored. */
export interface Lane {
  tenantId: string;
  /** Null: nobody to tell (outcomes are marked reported locally). */
  syncUrl: string | null;
  state: LaneState;
  record: LaneRecord;
  /** Events may be waiting that no round has read yet. */
  dirty: boolean;
  /** The last round found events it had to hold (backoff or do-not-disturb) until `dueAt`. */
  holding: boolean;
  dueAt: number;
  round: Promise<void> | null;
  abort: AbortController | null;
}

const newLane = (stored: ReportLane, now: number): Lane => ({
  tenantId: stored.tenantId,
  syncUrl: stored.syncUrl,
  state: {
    failures: stored.record.failures,
    retryAt: stored.record.retryAt,
    dndUntil: stored.record.dndUntil,
    lastSuccessAt: stored.record.lastSuccessAt,
    followups: 0,
  },
  record: stored.record,
  // After a start nobody knows what is waiting: look.
  dirty: true,
  holding: false,
  dueAt: now,
  round: null,
  abort: null,
});

/** Lanes follow the stored tenants: new ones start due now, a changed endpoint looks again now, a deleted tenant's round is aborted. */
export function rescanLanes(lanes: Map<string, Lane>, stored: readonly ReportLane[], now: number): void {
  const seen = new Set<string>();
  for (const tenant of stored) {
    seen.add(tenant.tenantId);
    const lane = lanes.get(tenant.tenantId);
    if (lane === undefined) lanes.set(tenant.tenantId, newLane(tenant, now));
    else if (lane.syncUrl !== tenant.syncUrl)
      Object.assign(lane, { syncUrl: tenant.syncUrl, dirty: true, holding: false, dueAt: now });
  }
  for (const [tenantId, lane] of lanes) {
    if (seen.has(tenantId)) continue;
    lane.abort?.abort();
    lanes.delete(tenantId);
  }
}

/** The earliest due round of a lane with none in flight, or `latest` when none is earlier. */
export function earliestDue(lanes: ReadonlyMap<string, Lane>, latest: number): number {
  let earliest = latest;
  for (const lane of lanes.values()) if (lane.round === null && lane.dueAt < earliest) earliest = lane.dueAt;
  return earliest;
}
