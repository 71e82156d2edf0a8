/**
 * What waits in the queue, as the store counts it: by tenant, account, status
 * and priority, and the message that has waited longest past its due time. Only
 * waiting messages are counted: they are what an operator acts on, and what the
 * store counts without reading every message ever sent. GET /status and the
 * console show it through ingress/http/views/queue-overview.ts.
 */
import type { Priority } from './message.js';

export type WaitingStatus = 'queued' | 'deferred' | 'sending' | 'suspended';

export interface QueueCount {
  tenantId: string;
  accountId: string;
  status: WaitingStatus;
  priority: Priority;
  count: number;
}

export interface OldestDue {
  tenantId: string;
  /** The client id. */
  clientId: string;
  accountId: string;
  /** Epoch ms it has been due since. */
  dueAt: number;
}

export interface QueueStatusStore {
  /** Waiting messages grouped by tenant, account, status and priority (of one tenant, or all). */
  counts(tenantId: string | null): QueueCount[];
  /** Waiting messages per account only: cheaper than counts() when the breakdown is not needed. */
  waitingByAccount(tenantId: string | null): Array<Pick<QueueCount, 'tenantId' | 'accountId' | 'count'>>;
  /** Per tenant that has accounts: how many of them are paused (a relay refused their credentials; saving one resumes it). */
  pausedAccounts(): Array<{ tenantId: string; paused: number }>;
  /** The dispatchable message due longest ago, or null when none is due. */
  oldestDue(tenantId: string | null, now: number): OldestDue | null;
}
