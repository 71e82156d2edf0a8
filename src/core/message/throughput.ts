/**
 * Throughput over a recent window (the console's chart): outcomes per minute,
 * counted from the stored timeline so that a restart loses nothing. Pure: the
 * store counts, this lays the counts out as one series per outcome.
 */

export const THROUGHPUT_OUTCOMES = ['sent', 'deferred', 'failed', 'bounced'] as const;
export type ThroughputOutcome = (typeof THROUGHPUT_OUTCOMES)[number];

export interface ThroughputCount {
  /** Minutes since the window's start (0 = its first minute). */
  minute: number;
  outcome: ThroughputOutcome;
  count: number;
}

export interface ThroughputStore {
  /** Outcomes recorded at or after `since` (epoch ms), by minute since then, of one tenant or all (null). */
  perMinute(tenantId: string | null, since: number): ThroughputCount[];
}

export interface ThroughputSeries {
  /** Epoch ms of the first minute. */
  since: number;
  minutes: number;
  series: Record<ThroughputOutcome, number[]>;
  totals: Record<ThroughputOutcome, number>;
  /** The largest count of any outcome in any minute (the chart's scale). */
  peak: number;
}

export function throughputSeries(counts: readonly ThroughputCount[], since: number, minutes: number): ThroughputSeries {
  const empty = (): number[] => Array.from({ length: minutes }, () => 0);
  const series = { sent: empty(), deferred: empty(), failed: empty(), bounced: empty() };
  const totals = { sent: 0, deferred: 0, failed: 0, bounced: 0 };
  let peak = 0;
  for (const { minute, outcome, count } of counts) {
    if (minute < 0 || minute >= minutes) continue;
    series[outcome][minute] = (series[outcome][minute] ?? 0) + count;
    totals[outcome] += count;
    peak = Math.max(peak, series[outcome][minute] ?? 0);
  }
  return { since, minutes, series, totals, peak };
}
