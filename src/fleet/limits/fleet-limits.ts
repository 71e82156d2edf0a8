/**
 * Fleet-wide limits on one node: the dispatcher's gate answers from
 * the leases this node holds, at no cost beyond a map lookup; chunks are
 * leased from the window counters in the background, ahead of need, and a
 * grant wakes the dispatcher. Cut off from the cluster, the node spends what
 * it holds, then waits; /status and /ready say so (`fleet.limits`).
 */
import type { KV } from '@nats-io/kv';
import {
  chunkSize,
  connectionShare,
  currentLease,
  fleetBudget,
  leaseKey,
  spend,
  windowsToTopUp,
  type AccountLeases,
  type FleetLimitGate,
  type GatedAccount,
} from '../../core/fleet/index.js';
import type { Clock, Logger } from '../../core/index.js';
import { WINDOW_KINDS, type Limits, type Usage } from '../../core/account/index.js';
import { createPeriodicLoop, type Service } from '../../runtime/index.js';
import type { FleetLink } from '../link/fleet-service.js';
import { createLimitCounters, openLimitCounters, type LimitCounters } from './limit-counters.js';
import { limitsView, type FleetLimitsStatus } from './fleet-limits-view.js';

export interface FleetLimitsSettings {
  bucket: string;
  replicas: number;
  /** The most one lease takes (core/fleet/budget-lease.ts chunkSize makes it smaller for small limits). */
  chunk: number;
  /** How often wanted leases are retried while the cluster is away, and membership changes looked for. */
  retryMs: number;
}

export interface AccountLimitState {
  tenantId: string;
  accountId: string;
  /** One of the account's destinations (per-destination limits); absent: the account's own limits. */
  destination?: string;
  limits: Limits;
  leases: AccountLeases;
  /** This node's connection share as last given to the dispatcher. */
  connections: number;
  /** Due mail waits for a lease: retried until one comes. */
  wanted: boolean;
  requesting: boolean;
}

export interface FleetLimits {
  gate: FleetLimitGate;
  service: Service;
  /**
   * Calls `listener` when the dispatcher should look again: a lease came, or the live nodes (and
   * with them the connection shares) changed. The dispatcher is made over the gate, so it listens
   * rather than being a dependency.
   */
  onChange(listener: () => void): void;
  status(): FleetLimitsStatus;
  /**
   * The usage "why is it still queued" reads: a window the fleet has used up
   * (and this node's lease of it spent) reads as full, so its messages say
   * `rate_limited` until the window ends, as on a single node.
   */
  waitingUsage(
    local: (tenantId: string, accountId: string, now: number) => Usage,
  ): (tenantId: string, accountId: string, now: number) => Usage;
  /** One retry round now (tests; the loop runs it on its own). */
  tick(): Promise<void>;
}

type Accounts = Map<string, AccountLimitState>;

/** An account's state, or one of its destinations' (a `/` cannot be in an account id). */
const stateKey = (account: GatedAccount): string =>
  account.destination === undefined
    ? `${account.tenantId}/${account.id}`
    : `${account.tenantId}/${account.id}/${account.destination}`;

/** Leases chunks of the window counters for an account that runs low; one request per account at a time. */
function createLeaseRequests(
  settings: FleetLimitsSettings,
  deps: { link: FleetLink; clock: Clock; log: Logger; wake: () => void },
) {
  const { link, clock, log } = deps;
  let counters: LimitCounters | null = null;
  let cutOff = false;
  const aliveCount = (): number => link.aliveNodes().length;
  /** The chunk a top-up is judged against (the counter's own value sizes the real one). */
  const nominalChunk = (limit: number): number => chunkSize(limit, 0, aliveCount(), settings.chunk);

  const openCounters = async (): Promise<LimitCounters | null> => {
    if (counters !== null) return counters;
    const nc = link.connection();
    if (nc === null || !link.connected()) return null;
    const kv: KV = await openLimitCounters(nc, settings.bucket, settings.replicas);
    counters = createLimitCounters(kv);
    return counters;
  };

  const leaseWindows = async (kvCounters: LimitCounters, state: AccountLimitState): Promise<void> => {
    for (const kind of windowsToTopUp(state.limits, state.leases, nominalChunk, clock.now())) {
      const limit = state.limits[kind] as number;
      // The lease of the window asked for: if the window ends meanwhile, its grant goes with it.
      const lease = currentLease(state.leases, kind, clock.now());
      const key = leaseKey(state.tenantId, state.accountId, kind, lease.start, state.destination);
      const result = await kvCounters.lease(key, limit, (leasedSoFar) =>
        chunkSize(limit, leasedSoFar, aliveCount(), settings.chunk),
      );
      lease.granted += result.granted;
      if (result.counter >= limit) lease.exhausted = true;
    }
  };

  /** Leases the next chunk of every window that runs low; one request per account at a time. */
  const topUp = async (state: AccountLimitState): Promise<void> => {
    if (state.requesting) return;
    state.requesting = true;
    try {
      const kvCounters = await openCounters();
      if (kvCounters === null || !link.connected()) {
        cutOff = true;
        state.wanted = true;
        return;
      }
      await leaseWindows(kvCounters, state);
      if (cutOff) log.info({}, 'fleet limit counters reachable again');
      cutOff = false;
      state.wanted = false;
      deps.wake();
    } catch (error) {
      if (!cutOff)
        log.warn(
          { err: error, tenantId: state.tenantId, accountId: state.accountId },
          'fleet limit counters unreachable; sending within the leases held',
        );
      cutOff = true;
      state.wanted = true;
    } finally {
      state.requesting = false;
    }
  };
  return {
    topUp,
    nominalChunk,
    cutOff: () => cutOff || !link.connected(),
    stats: () => counters?.stats() ?? { leases: 0, conflicts: 0, ms: 0 },
  };
}

/** The dispatcher's gate: answers from the leases held, and asks for more in the background. */
function createGate(
  link: FleetLink,
  accounts: Accounts,
  requests: ReturnType<typeof createLeaseRequests>,
): FleetLimitGate {
  const stateOf = (account: GatedAccount, limits: Limits): AccountLimitState => {
    const key = stateKey(account);
    let state = accounts.get(key);
    if (state === undefined) {
      state = {
        tenantId: account.tenantId,
        accountId: account.id,
        ...(account.destination === undefined ? {} : { destination: account.destination }),
        limits,
        leases: {},
        connections: account.maxConnections,
        wanted: false,
        requesting: false,
      };
      accounts.set(key, state);
    }
    state.limits = limits;
    return state;
  };
  return {
    budget: (account, limits, local, now) => fleetBudget(limits, local, stateOf(account, limits).leases, now),
    claimed(account, limits, count, now) {
      const state = stateOf(account, limits);
      spend(limits, state.leases, count, now);
      if (windowsToTopUp(limits, state.leases, requests.nominalChunk, now).length > 0) void requests.topUp(state);
    },
    want(account, limits) {
      const state = stateOf(account, limits);
      state.wanted = true;
      void requests.topUp(state);
    },
    connections(account, now) {
      const share = connectionShare(account.maxConnections, link.aliveNodes(), link.nodeId, Math.floor(now / 60_000));
      const state = accounts.get(stateKey(account));
      if (state !== undefined) state.connections = share;
      return share;
    },
  };
}

/** A window the fleet has used up (and this node's lease of it spent) reads as full. */
const usageSeenBy =
  (accounts: Accounts) =>
  (local: (tenantId: string, accountId: string, now: number) => Usage) =>
  (tenantId: string, accountId: string, now: number): Usage => {
    const usage = local(tenantId, accountId, now);
    const state = accounts.get(`${tenantId}/${accountId}`);
    if (state === undefined) return usage;
    const seen = { ...usage };
    for (const kind of WINDOW_KINDS) {
      const limit = state.limits[kind];
      const lease = limit === null ? null : currentLease({ ...state.leases }, kind, now);
      if (limit !== null && lease !== null && lease.exhausted && lease.used >= lease.granted)
        seen[kind] = Math.max(seen[kind], limit);
    }
    return seen;
  };

export function createFleetLimits(
  settings: FleetLimitsSettings,
  deps: { link: FleetLink; clock: Clock; log: Logger },
): FleetLimits {
  const { link, clock, log } = deps;
  const listeners: Array<() => void> = [];
  const wake = (): void => {
    for (const listener of listeners) listener();
  };
  const accounts: Accounts = new Map();
  const requests = createLeaseRequests(settings, { link, clock, log, wake });
  let membership = '';

  /** Retries what waits for a lease; a change of the live nodes (or the minute's turn) changes shares: the dispatcher looks again. */
  const retry = async (): Promise<void> => {
    const now = clock.now();
    const seen = `${link.aliveNodes().join(',')}@${Math.floor(now / 60_000)}`;
    if (seen !== membership) {
      membership = seen;
      wake();
    }
    await Promise.all([...accounts.values()].filter((state) => state.wanted).map((state) => requests.topUp(state)));
  };
  const loop = createPeriodicLoop({ name: 'fleet-limits', intervalMs: settings.retryMs, run: retry, log, clock });

  return {
    gate: createGate(link, accounts, requests),
    service: { name: 'fleet-limits', start: () => loop.start(), stop: () => loop.stop() },
    onChange(listener) {
      listeners.push(listener);
    },
    status: () =>
      limitsView(
        [...accounts.values()],
        { cutOff: requests.cutOff(), chunk: settings.chunk, stats: requests.stats() },
        clock.now(),
      ),
    tick: () => loop.tick(),
    waitingUsage: usageSeenBy(accounts),
  };
}
