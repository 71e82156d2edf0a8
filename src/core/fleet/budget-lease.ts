/**
 * Fleet-wide sending limits: each window's counter lives in the
 * cluster and says how much of the window's limit has been leased to nodes;
 * a node takes a chunk with compare-and-set and spends it locally, so a send
 * costs no round trip. The cluster never grants past the limit, so the
 * fleet's sends in a window stay within it; what a node holds unsent when the
 * window ends (at most its last chunk) is the only slack. Pure: the adapter
 * in src/fleet/ talks to the KV bucket, this decides sizes and budgets.
 */
import {
  type Limits,
  type Usage,
  type WindowKind,
  WINDOW_KINDS,
  WINDOW_MS,
  windowStart,
} from '../account/rate-limit.js';

/**
 * The counter's key: one per account (or one of its destinations), window kind and window
 * (start in epoch ms, aligned to UTC).
 */
export function leaseKey(
  tenantId: string,
  accountId: string,
  kind: WindowKind,
  start: number,
  destination?: string,
): string {
  // Tenant and account ids are identifiers ([A-Za-z0-9_-]): safe as KV key tokens. A destination's
  // name (`gmail.com`, `*.outlook.com`) is not: it travels in hex, a token of its own.
  const to = destination === undefined ? '' : `.to.${Buffer.from(destination, 'utf8').toString('hex')}`;
  return `limits.${tenantId}.${accountId}${to}.${kind}.${start}`;
}

/**
 * How much one lease takes: small enough that every live node gets a share
 * of the window (a quarter of an even split), never more than is left, and at
 * least one while anything is left.
 */
export function chunkSize(limit: number, leasedSoFar: number, aliveNodes: number, configuredChunk: number): number {
  const left = Math.max(0, limit - leasedSoFar);
  const share = Math.ceil(limit / (Math.max(1, aliveNodes) * 4));
  return Math.min(left, Math.max(1, Math.min(configuredChunk, share)));
}

/** One compare-and-set step on a window's counter: what to write and what this node gets. */
export function nextGrant(leasedSoFar: number, limit: number, chunk: number): { granted: number; counter: number } {
  const granted = Math.max(0, Math.min(chunk, limit - leasedSoFar));
  return { granted, counter: leasedSoFar + granted };
}

/** What a node holds of one window. */
export interface WindowLease {
  start: number;
  /** Leased to this node in this window. */
  granted: number;
  /** Claimed on this node against it. */
  used: number;
  /** The counter as last read reached the limit: no more leases in this window. */
  exhausted: boolean;
}

/** An account's leases, one per limited window kind. */
export type AccountLeases = Partial<Record<WindowKind, WindowLease>>;

/** The lease of the window containing `now`; a lease of an earlier window has expired with it. */
export function currentLease(leases: AccountLeases, kind: WindowKind, now: number): WindowLease {
  const start = windowStart(kind, now);
  const held = leases[kind];
  if (held !== undefined && held.start === start) return held;
  const fresh = { start, granted: 0, used: 0, exhausted: false };
  leases[kind] = fresh;
  return fresh;
}

export const leaseLeft = (lease: WindowLease): number => Math.max(0, lease.granted - lease.used);

export type FleetBudget =
  /**
   * The usage the local claim plan should see: the fleet's exhausted windows and the node's lease
   * folded in. `leaseBound`: what is left is this node's lease, not the window's (the fleet may
   * have more once the next chunk comes), so what cannot go now should not wait for the window's end.
   */
  | { kind: 'usage'; usage: Usage; leaseBound: boolean }
  /** A limited window's lease is spent but the fleet may have more: wait for the next chunk (never reject for it). */
  | { kind: 'awaiting_lease'; windows: WindowKind[] };

/**
 * The budget this node may claim now, as a usage for the unchanged local plan
 * (core/delivery/claim-plan.ts): per limited window, the smaller of what the local
 * count leaves and what the lease leaves; a window the fleet has used up
 * reads as full, so the plan waits for its end (or rejects) as it does alone.
 */
export function fleetBudget(limits: Limits, local: Usage, leases: AccountLeases, now: number): FleetBudget {
  const usage: Usage = { ...local };
  const awaiting: WindowKind[] = [];
  let leaseBound = false;
  for (const kind of WINDOW_KINDS) {
    const limit = limits[kind];
    if (limit === null) continue;
    const lease = currentLease(leases, kind, now);
    const left = leaseLeft(lease);
    const window = Math.max(0, limit - local[kind]);
    if (left === 0 && !lease.exhausted) awaiting.push(kind);
    else usage[kind] = limit - Math.min(window, left);
    if (!lease.exhausted && left < window) leaseBound = true;
  }
  return awaiting.length > 0 ? { kind: 'awaiting_lease', windows: awaiting } : { kind: 'usage', usage, leaseBound };
}

/** Claimed on this node: spent from every limited window's lease. */
export function spend(limits: Limits, leases: AccountLeases, count: number, now: number): void {
  for (const kind of WINDOW_KINDS) if (limits[kind] !== null) currentLease(leases, kind, now).used += count;
}

/**
 * The windows whose next chunk should be asked for now: spent down to half a
 * chunk, so that the next one arrives before the lease runs out and sends do
 * not stall on the cluster. A window the fleet has used up is not asked again.
 */
export function windowsToTopUp(
  limits: Limits,
  leases: AccountLeases,
  chunk: (limit: number) => number,
  now: number,
): WindowKind[] {
  const wanted: WindowKind[] = [];
  for (const kind of WINDOW_KINDS) {
    const limit = limits[kind];
    if (limit === null) continue;
    const lease = currentLease(leases, kind, now);
    if (!lease.exhausted && leaseLeft(lease) <= Math.floor(chunk(limit) / 2)) wanted.push(kind);
  }
  return wanted;
}

/** When a window's lease and counter are gone: the KV bucket keeps keys a little longer than the longest window. */
export const LEASE_KEY_TTL_MS = WINDOW_MS.day + WINDOW_MS.hour;

/**
 * `max_connections` fleet-wide: the account's connections split over the live
 * nodes (sorted ids, the same list on every node once heartbeats agree), the
 * first `max % nodes` taking one more, so the shares add up to the max. With
 * fewer connections than nodes the turn passes from node to node each
 * `turn` (e.g. the minute's number), so that no node's mail for the account
 * waits for ever; otherwise the split stays put (a share that changes
 * rebuilds the node's pool).
 */
export function connectionShare(
  maxConnections: number,
  aliveNodes: readonly string[],
  nodeId: string,
  turn: number,
): number {
  const nodes = [...new Set([...aliveNodes, nodeId])].sort();
  const rotation = maxConnections < nodes.length ? turn : 0;
  const index = (((nodes.indexOf(nodeId) - rotation) % nodes.length) + nodes.length) % nodes.length;
  const base = Math.floor(maxConnections / nodes.length);
  return base + (index < maxConnections % nodes.length ? 1 : 0);
}
