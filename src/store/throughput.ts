/**
 * SQLite side of the throughput chart. The outbox is the timeline and is kept
 * in seq (commit) order, whose occurred_at only ever lags by the moments an
 * outcome waits for its batch commit: the first row of the window is found by
 * a binary search over seq (a few rowid lookups, no index on time to pay for
 * at every write), then only the window is read.
 */
import type { ThroughputCount, ThroughputOutcome, ThroughputStore } from '../core/message/index.js';
import type { SqliteDatabase } from './database.js';

/** Rows committed this long after their occurred_at are still counted (outcome batches commit within a second). */
const COMMIT_LAG_MS = 60_000;

const OUTCOME_OF: Record<string, ThroughputOutcome> = {
  'message.sent': 'sent',
  'message.deferred': 'deferred',
  'message.error': 'failed',
  'message.expired': 'failed',
  'message.bounced': 'bounced',
};

export function createSqliteThroughput(db: SqliteDatabase): ThroughputStore {
  const bounds = db.prepare<[], { low: number | null; high: number | null }>(
    'SELECT min(seq) AS low, max(seq) AS high FROM outbox',
  );
  // The first existing row at or after a seq (seqs have gaps where rows were pruned).
  const at = db.prepare<[number], { seq: number; occurred_at: number }>(
    'SELECT seq, occurred_at FROM outbox WHERE seq >= ? ORDER BY seq LIMIT 1',
  );
  const counts = db.prepare<Record<string, unknown>, { minute: number; event_type: string; count: number }>(`
    SELECT CAST((occurred_at - @since) / 60000 AS INTEGER) AS minute, event_type, count(*) AS count FROM outbox
    WHERE seq >= @from AND occurred_at >= @since AND event_type IN (${Object.keys(OUTCOME_OF)
      .map((type) => `'${type}'`)
      .join(', ')})
      AND (@tenant IS NULL OR tenant_id = @tenant)
    GROUP BY minute, event_type`);

  // better-sqlite3 binds a JS number as REAL: without the CAST, (occurred_at - @since) / 60000
  // was a fractional minute, one group per event, and the chart drew none of them.

  /** The smallest seq whose row occurred at or after `instant` (assuming occurred_at rises with seq). */
  const firstSeqFrom = (instant: number): number | null => {
    const { low, high } = bounds.get() ?? { low: null, high: null };
    if (low === null || high === null) return null;
    let lo = low;
    let hi = high + 1;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      const row = at.get(mid);
      if (row === undefined || row.occurred_at >= instant) hi = mid;
      else lo = row.seq + 1;
    }
    return lo;
  };

  return {
    perMinute(tenantId, since) {
      const from = firstSeqFrom(since - COMMIT_LAG_MS);
      if (from === null) return [];
      return counts.all({ since, from, tenant: tenantId }).flatMap((row): ThroughputCount[] => {
        const outcome = OUTCOME_OF[row.event_type];
        return outcome === undefined ? [] : [{ minute: row.minute, outcome, count: row.count }];
      });
    },
  };
}
