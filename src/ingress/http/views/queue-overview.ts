/**
 * The queue at a glance, as GET /status answers it and the console shows it:
 * the store's waiting counts summed by status, priority, tenant and account
 * (busiest first), and how long the oldest due message is overdue, in the
 * API's snake_case and epoch seconds.
 */
import type { Priority, OldestDue, QueueCount, WaitingStatus } from '../../../core/message/index.js';

export interface QueueOverview {
  waiting: number;
  by_status: Record<WaitingStatus, number>;
  by_priority: Record<`${Priority}`, number>;
  by_tenant: Array<{ tenant_id: string; waiting: number }>;
  by_account: Array<{
    tenant_id: string;
    account_id: string;
    waiting: number;
    by_status: { [S in WaitingStatus]?: number | undefined };
  }>;
  oldest_due: OldestDueView | null;
}

/** The message due longest ago: `due_ts` in epoch seconds, and how far past it now. */
export interface OldestDueView {
  tenant_id: string;
  id: string;
  account_id: string;
  due_ts: number;
  overdue_seconds: number;
}

export function queueOverview(counts: readonly QueueCount[], oldest: OldestDue | null, now: number): QueueOverview {
  const byStatus: Record<WaitingStatus, number> = { queued: 0, deferred: 0, sending: 0, suspended: 0 };
  const byPriority: Record<`${Priority}`, number> = { 0: 0, 1: 0, 2: 0, 3: 0 };
  const tenants = new Map<string, number>();
  const accounts = new Map<string, QueueOverview['by_account'][number]>();
  let waiting = 0;
  for (const row of counts) {
    waiting += row.count;
    byStatus[row.status] += row.count;
    byPriority[`${row.priority}`] += row.count;
    tenants.set(row.tenantId, (tenants.get(row.tenantId) ?? 0) + row.count);
    const key = `${row.tenantId}/${row.accountId}`;
    const account = accounts.get(key) ?? {
      tenant_id: row.tenantId,
      account_id: row.accountId,
      waiting: 0,
      by_status: {},
    };
    account.waiting += row.count;
    account.by_status[row.status] = (account.by_status[row.status] ?? 0) + row.count;
    accounts.set(key, account);
  }
  const byWaiting = <T extends { waiting: number }>(a: T, b: T): number => b.waiting - a.waiting;
  return {
    waiting,
    by_status: byStatus,
    by_priority: byPriority,
    by_tenant: [...tenants].map(([tenant_id, count]) => ({ tenant_id, waiting: count })).sort(byWaiting),
    by_account: [...accounts.values()].sort(byWaiting),
    oldest_due: oldest === null ? null : viewOldestDue(oldest, now),
  };
}

function viewOldestDue(oldest: OldestDue, now: number): OldestDueView {
  const dueTs = Math.floor(oldest.dueAt / 1000);
  return {
    tenant_id: oldest.tenantId,
    id: oldest.clientId,
    account_id: oldest.accountId,
    due_ts: dueTs,
    overdue_seconds: Math.max(0, Math.floor(now / 1000) - dueTs),
  };
}
