/**
 * The dispatcher's port to fleet-wide limits: synchronous answers
 * from what this node already holds, so that a claim never waits on the
 * cluster; the adapter asks the cluster for more in the background. A single
 * node has no gate: its local limiter alone, as always.
 */
import type { Account } from '../account/account.js';
import type { FleetBudget } from './budget-lease.js';
import type { Limits, Usage } from '../account/rate-limit.js';

/** An account, or one of its destinations (per-destination limits): counters and shares of their own. */
export type GatedAccount = Pick<Account, 'tenantId' | 'id' | 'maxConnections'> & { destination?: string };

export interface FleetLimitGate {
  /** What the account may claim now on this node, its local usage folded in. */
  budget(account: GatedAccount, limits: Limits, local: Usage, now: number): FleetBudget;
  /** Claimed on this node: spent from its leases (and the next chunk asked for ahead of time). */
  claimed(account: GatedAccount, limits: Limits, count: number, now: number): void;
  /** Mail of the account is due and its lease is spent: ask the cluster for a chunk (background; a grant wakes the dispatcher). */
  want(account: GatedAccount, limits: Limits, now: number): void;
  /** This node's share of the account's `max_connections`. */
  connections(account: GatedAccount, now: number): number;
}
