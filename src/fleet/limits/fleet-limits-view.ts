/**
 * What `/status` and `/ready` show of fleet-wide limits (`fleet.limits`): whether
 * this node is cut off from the window counters, and per account the leases of
 * the current windows and its connection share. Pure: read from the node's state.
 */
import { currentLease, leaseLeft, type AccountLeases } from '../../core/fleet/index.js';
import { WINDOW_KINDS, type Limits, type WindowKind } from '../../core/account/index.js';

export interface WindowLeaseView {
  window_start: number;
  /** Leased to this node in this window. */
  leased: number;
  /** Claimed on this node from it. */
  used: number;
  left: number;
  /** The fleet has leased the whole limit of this window. */
  fleet_exhausted: boolean;
}

export interface AccountLimitsView {
  tenant_id: string;
  account_id: string;
  /** One of the account's destinations (per-destination limits); absent: the account's own. */
  destination?: string;
  /** This node's share of the account's (or destination's) max_connections. */
  connections: number;
  /** A window's lease is spent and the next chunk has not come (cut off, or on its way). */
  awaiting_lease: boolean;
  windows: Partial<Record<WindowKind, WindowLeaseView>>;
}

export interface FleetLimitsStatus {
  /** The window counters cannot be reached: the node spends the leases it holds, then waits. */
  cut_off: boolean;
  /** The configured most one lease takes. */
  chunk: number;
  /** Since the start: leases asked of the cluster, writes that lost a compare-and-set to another node, milliseconds spent asking. */
  leases: { requests: number; conflicts: number; ms: number };
  accounts: AccountLimitsView[];
}

interface AccountState {
  tenantId: string;
  accountId: string;
  destination?: string;
  limits: Limits;
  leases: AccountLeases;
  connections: number;
}

export function limitsView(
  states: readonly AccountState[],
  node: { cutOff: boolean; chunk: number; stats: { leases: number; conflicts: number; ms: number } },
  now: number,
): FleetLimitsStatus {
  const accounts = states.map((state): AccountLimitsView => {
    const windows: AccountLimitsView['windows'] = {};
    let awaiting = false;
    for (const kind of WINDOW_KINDS) {
      if (state.limits[kind] === null) continue;
      // Read without replacing: a view must not reset what it looks at.
      const lease = currentLease({ ...state.leases }, kind, now);
      windows[kind] = {
        window_start: lease.start,
        leased: lease.granted,
        used: lease.used,
        left: leaseLeft(lease),
        fleet_exhausted: lease.exhausted,
      };
      if (leaseLeft(lease) === 0 && !lease.exhausted) awaiting = true;
    }
    return {
      tenant_id: state.tenantId,
      account_id: state.accountId,
      ...(state.destination === undefined ? {} : { destination: state.destination }),
      connections: state.connections,
      awaiting_lease: awaiting,
      windows,
    };
  });
  return {
    cut_off: node.cutOff,
    chunk: node.chunk,
    leases: { requests: node.stats.leases, conflicts: node.stats.conflicts, ms: Math.round(node.stats.ms) },
    accounts,
  };
}
