// The throughput chart's store query against a real database: outcomes counted per whole minute.
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { throughputSeries } from '../../src/core/message/throughput.js';
import { loadMigrations, migrate } from '../../src/store/migrations.js';
import { createSqliteThroughput } from '../../src/store/throughput.js';

describe('outcomes per minute from the timeline', () => {
  it('groups events of the same minute together, whatever their second', () => {
    const db = new Database(':memory:');
    migrate(db, loadMigrations());
    const since = 1_700_000_040_000 - 59 * 60_000;
    const add = db.prepare(
      `INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, tenant_id, payload, occurred_at) VALUES (?, 'message', 'acme/m', ?, 'acme', '{}', ?)`,
    );
    // Four sends in the last minute at different seconds, one deferral a minute earlier, one queued (not an outcome).
    [1_000, 7_123, 30_500, 59_999].forEach((offset, index) =>
      add.run(`s${index}`, 'message.sent', since + 59 * 60_000 + offset),
    );
    add.run('d0', 'message.deferred', since + 58 * 60_000 + 10);
    add.run('q0', 'message.queued', since + 59 * 60_000 + 5);
    const counts = createSqliteThroughput(db).perMinute(null, since);
    expect(counts.sort((a, b) => a.minute - b.minute)).toEqual([
      { minute: 58, outcome: 'deferred', count: 1 },
      { minute: 59, outcome: 'sent', count: 4 },
    ]);
    const series = throughputSeries(counts, since, 60);
    expect(series.series.sent[59]).toBe(4);
    expect(series.peak).toBe(4);
  });
});
