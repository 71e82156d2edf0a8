/**
 * SQLite side of the fleet's claim log (schema migration 15): each record
 * applied as core/fleet/claim-ledger.ts's holderAfter says, in one transaction with
 * the log sequence it ends at. Not synced at each commit: a tail lost to a
 * power cut is applied again from the log, whose sequence was lost with it.
 */
import type { ClaimIndex, ClaimRecord } from '../core/fleet/index.js';
import { transactionRunner, type SqliteDatabase } from './database.js';

export function createSqliteClaimIndex(db: SqliteDatabase): ClaimIndex {
  const inTransaction = transactionRunner(db);
  // Keys arrive as one JSON array per record: one statement per record, not one per key.
  const claim = db.prepare(
    `INSERT INTO fleet_claims (key, node, at) SELECT value, @node, @at FROM json_each(@keys) WHERE true
       ON CONFLICT (key) DO NOTHING`,
  );
  const take = db.prepare(
    `UPDATE fleet_claims SET node = @node, at = @at WHERE node = @from AND key IN (SELECT value FROM json_each(@keys))`,
  );
  const assign = db.prepare(
    `INSERT INTO fleet_claims (key, node, at) SELECT value, @node, @at FROM json_each(@keys) WHERE true
       ON CONFLICT (key) DO UPDATE SET node = excluded.node, at = excluded.at`,
  );
  const cursor = db.prepare('SELECT seq FROM fleet_claim_cursor WHERE id = 1').pluck();
  const moveCursor = db.prepare(
    'INSERT INTO fleet_claim_cursor (id, seq) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET seq = excluded.seq',
  );
  const holders = db.prepare('SELECT key, node FROM fleet_claims WHERE key IN (SELECT value FROM json_each(?))');
  const prune = db.prepare('DELETE FROM fleet_claims WHERE at < ?');

  const applyOne = (record: ClaimRecord): void => {
    const keys = JSON.stringify(record.keys);
    if (record.kind === 'claim') claim.run({ node: record.node, at: record.at, keys });
    else if (record.kind === 'assign') assign.run({ node: record.node, at: record.at, keys });
    else take.run({ node: record.node, from: record.from, at: record.at, keys });
  };

  return {
    appliedSeq: () => (cursor.get() as number | undefined) ?? 0,
    apply(throughSeq, records) {
      inTransaction(() => {
        for (const record of records) applyOne(record);
        moveCursor.run(throughSeq);
      }, 'immediate');
    },
    holders(keys) {
      const found = new Map<string, string>();
      if (keys.length === 0) return found;
      for (const row of holders.all(JSON.stringify(keys)) as Array<{ key: string; node: string }>)
        found.set(row.key, row.node);
      return found;
    },
    prune: (before) => prune.run(before).changes,
  };
}
