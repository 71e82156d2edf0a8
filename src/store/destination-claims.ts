/**
 * The store's side of per-destination limits: the due messages of an account with their
 * recipients' domains, a message held for a destination (queued, its next attempt at the instant
 * the destination may take it, no attempt spent), and the destinations' usage windows, counted
 * at claim in the claim's transaction like the account's (account_usage).
 */
import { WINDOW_KINDS, windowStart, type Usage } from '../core/account/index.js';
import type { DestinationBudget } from '../core/delivery/index.js';
import type { SqliteDatabase } from './database.js';

export interface DueCandidate {
  pk: number;
  domains: string[];
  heldBefore: boolean;
}

export type DestinationClaims = ReturnType<typeof createDestinationClaims>;

export function createDestinationClaims(db: SqliteDatabase, waiting: string) {
  const due = db.prepare<
    [string, string, number, number, number],
    { pk: number; rcpt_domains: string | null; held: number }
  >(`SELECT pk, rcpt_domains, held_for IS NOT NULL AS held FROM messages
    WHERE tenant_id = ? AND account_id = ? AND ${waiting} AND priority = ? AND next_attempt_at <= ?
    ORDER BY next_attempt_at, pk LIMIT ?`);
  const hold = db.prepare<[number, string, number]>(
    `UPDATE messages SET next_attempt_at = ?, held_for = ? WHERE pk = ?`,
  );
  const usageRows = db.prepare<
    [string, string],
    { destination: string; window_kind: string; window_start: number; used: number }
  >(
    `SELECT destination, window_kind, window_start, used FROM destination_usage WHERE tenant_id = ? AND account_id = ?`,
  );
  const addUsage =
    db.prepare(`INSERT INTO destination_usage (tenant_id, account_id, destination, window_kind, window_start, used)
    VALUES (?, ?, ?, ?, ?, ?)
    ON CONFLICT (tenant_id, account_id, destination, window_kind) DO UPDATE SET
      used = CASE WHEN window_start = excluded.window_start THEN used + excluded.used ELSE excluded.used END,
      window_start = excluded.window_start`);

  return {
    /** Up to `limit` due messages of one priority, oldest due first, with their recipients' domains. */
    due(tenantId: string, accountId: string, priority: number, now: number, limit: number): DueCandidate[] {
      return due.all(tenantId, accountId, priority, now, limit).map((row) => ({
        pk: row.pk,
        domains: row.rcpt_domains === null || row.rcpt_domains === '' ? [] : row.rcpt_domains.split(','),
        heldBefore: row.held === 1,
      }));
    },
    hold(pk: number, destination: string, until: number): void {
      hold.run(until, destination, pk);
    },
    /** What the budget admitted, added to each destination's windows. */
    count(tenantId: string, accountId: string, budget: DestinationBudget, now: number): void {
      for (const [destination, count] of budget.taken())
        for (const kind of WINDOW_KINDS)
          addUsage.run(tenantId, accountId, destination, kind, windowStart(kind, now), count);
    },
    usage(tenantId: string, accountId: string, now: number): Map<string, Usage> {
      const usage = new Map<string, Usage>();
      for (const row of usageRows.all(tenantId, accountId)) {
        const kind = row.window_kind as keyof Usage;
        if (row.window_start !== windowStart(kind, now)) continue;
        const counted = usage.get(row.destination) ?? { minute: 0, hour: 0, day: 0 };
        counted[kind] = row.used;
        usage.set(row.destination, counted);
      }
      return usage;
    },
  };
}
