/**
 * One dispatcher step: reclaim expired leases (at most once a second), then
 * for each account claim what its plan (core/delivery/claim-plan.ts) allows and hand
 * it to its lane; answers how much was claimed and when to step next.
 */
import type { Account } from '../core/account/index.js';
import { isLimited, limitsOf, needsDueWake, planClaim } from '../core/delivery/index.js';
import type { Logger, AccountRepository, TenantRepository, DeliveryTelemetry } from '../core/index.js';
import type { FleetLimitGate } from '../core/fleet/index.js';
import type { MessageQueue } from '../core/message/index.js';
import type { Tenant } from '../core/tenant/index.js';
import { laneKey, laneWindow, type Lane } from './account-lane.js';
import type { DispatchLanes } from './dispatch-lanes.js';
import { fleetUsage, sharedAccount } from './fleet-claim-budget.js';
import type { RelayFailover } from './relay-failover.js';
import type { RelayPaces } from './relay-paces.js';
import type { RelayDestinations } from './relay-destinations.js';

export interface TickReport {
  claimed: number;
  /** When the next step runs (epoch ms): now when more may be due at once, null when nothing waits. */
  nextWakeAt: number | null;
}

export interface DispatchStepDeps {
  queue: MessageQueue;
  accounts: Pick<AccountRepository, 'list' | 'version'>;
  lanes: DispatchLanes;
  /** Forgotten at the start of each step. */
  tenants: { forget(): void };
  log: Logger;
  telemetry: DeliveryTelemetry;
  owner: string;
  leaseMs: number;
  claimBatch: number;
  /** Fleet mode: the fleet-wide limits' leases and connection shares; absent for a single node. */
  fleetLimits?: FleetLimitGate;
  /** Adaptive backoff: accounts the relay pushed back claim and launch at their pace; absent, never paced. */
  paces?: RelayPaces;
  /** Failover: an account that cannot send has its mail sent through a fallback account; absent, never. */
  failover?: RelayFailover;
  /** Per-destination limits: a relay with destination rules claims through their budget; absent, none apply. */
  destinations?: RelayDestinations;
}

type AccountLookup = (tenantId: string, id: string) => Account | null;

/** Leases last at least ten seconds: looking for expired ones once a second is enough. */
const RECLAIM_EVERY_MS = 1000;

/** What one account's turn did: how many it claimed, whether that was all it was allowed, and when to look at it again. */
interface Served {
  claimed: number;
  full: boolean;
  wakeAt: number | null;
}

/** Tenants (their attachment endpoint and its credentials) are read once per step, not per message. */
export function createStepTenants(tenants: Pick<TenantRepository, 'get'>) {
  let read = new Map<string, Tenant | null>();
  return {
    get(id: string): Tenant | null {
      if (!read.has(id)) read.set(id, tenants.get(id));
      return read.get(id) ?? null;
    },
    forget(): void {
      read = new Map();
    },
  };
}

/** What an account that claims nothing now answers: when to look at it again (null: a wake will come). */
const nothing = (wakeAt: number | null): Served => ({ claimed: 0, full: false, wakeAt });

/**
 * A paced relay's turn after `account`'s claim: the next step comes when its next message may go
 * (or when `account`'s next one is due, if later), never at once: a paced lane is never full for long.
 */
function pacedTurn(deps: DispatchStepDeps, account: Account, relay: Account, lane: Lane, claimed: number): Served {
  const next = deps.paces?.nextLaunchAt(relay) ?? null;
  const due = lane.ready.length > 0 ? next : deps.queue.nextDueAt(account.tenantId, account.id);
  return { claimed, full: false, wakeAt: due === null ? null : Math.max(due, next ?? due) };
}

/**
 * Claims what one account may send now and hands it on; answers its next wake instant. Its mail
 * goes through its own relay, or through a fallback account's while it cannot (failover).
 */
function serveAccount(deps: DispatchStepDeps, account: Account, now: number, lookup: AccountLookup): Served {
  const relay = deps.failover === undefined ? account : deps.failover.relayFor(account, lookup, now);
  // Failed over for want of an answer: the next step comes by the relay's next test, however idle the node.
  const testAt = deps.failover?.nextTestAt(account) ?? null;
  const served = relay === null || relay.pausedAt !== null ? nothing(null) : serveThrough(deps, account, relay, now);
  if (testAt === null) return served;
  return { ...served, wakeAt: served.wakeAt === null ? testAt : Math.min(served.wakeAt, testAt) };
}

/** `account`'s due mail claimed into `relay`'s lane, within `relay`'s limits, pace and connections. */
function serveThrough(deps: DispatchStepDeps, account: Account, relay: Account, now: number): Served {
  const { queue, lanes } = deps;
  const gate = deps.fleetLimits;
  const lane = lanes.laneOf(gate === undefined ? relay : sharedAccount(gate, relay, now));
  const limits = limitsOf(relay, now);
  const limited = isLimited(limits);
  const local = limited ? queue.usage(relay.tenantId, relay.id, now) : { minute: 0, hour: 0, day: 0 };
  const fleet = gate !== undefined && limited ? fleetUsage(gate, queue, relay, limits, local, now) : null;
  if (fleet !== null && 'wakeAt' in fleet) return nothing(fleet.wakeAt);
  const usage = fleet?.usage ?? local;
  lane.destinationCaps = deps.destinations?.capsOf(relay, now);
  // Paced (the relay pushed back): what was claimed goes at the pace, and no more is claimed before it may go.
  lanes.pump(lane);
  const pace = deps.paces?.gate(relay, now);
  if (pace !== undefined && pace.waitUntil !== null) return nothing(pace.waitUntil);
  const plan = planClaim({
    account: relay,
    window: pace?.claimAhead ?? laneWindow(lane),
    paced: pace !== undefined && pace.claimAhead !== null,
    held: lane.ready.length + lane.sending,
    claimBatch: deps.claimBatch,
    usage,
    now,
  });
  if (plan.kind === 'none') return nothing(null); // a finishing send wakes us
  if (plan.kind === 'wait_for_budget') {
    const due = queue.nextDueAt(account.tenantId, account.id);
    return nothing(due === null ? null : Math.max(due, plan.budgetReturnsAt ?? now));
  }
  const claimStartedAt = performance.now();
  const destinations = deps.destinations?.budgetFor(relay, now);
  const claimed = queue.claim({
    tenantId: account.tenantId,
    accountId: account.id,
    limit: plan.limit,
    maxPriority: plan.maxPriority,
    now,
    leaseOwner: deps.owner,
    leaseUntil: now + deps.leaseMs,
    ...(relay === account ? {} : { via: relay.id }),
    ...(destinations === undefined ? {} : { destinations }),
  });
  if (destinations !== undefined) deps.destinations?.claimed(relay, destinations, now);
  deps.telemetry.claimed(performance.now() - claimStartedAt);
  if (plan.reject) lanes.reject(claimed, now);
  else lanes.offer(lane, claimed);
  if (gate !== undefined && limited && !plan.reject && claimed.length > 0)
    gate.claimed(relay, limits, claimed.length, now);
  if (pace !== undefined && pace.claimAhead !== null) return pacedTurn(deps, account, relay, lane, claimed.length);
  return {
    claimed: claimed.length,
    // Held as many as one claim may (per-destination limits): more may be due, held or claimed at once.
    full: claimed.length === plan.limit || destinations?.full() === true,
    wakeAt: needsDueWake(plan, claimed.length) ? queue.nextDueAt(account.tenantId, account.id) : null,
  };
}

export function createDispatchStep(deps: DispatchStepDeps): (now: number) => TickReport {
  const { queue, lanes } = deps;
  let reclaimedAt = 0;
  let accounts: { version: string; list: Account[]; byKey: Map<string, Account> } = {
    version: '',
    list: [],
    byKey: new Map(),
  };
  /** Accounts are re-read (and their secrets decrypted) only when one of them changed. */
  const currentAccounts = (): Account[] => {
    const version = deps.accounts.version();
    if (version !== accounts.version) {
      const list = deps.accounts.list(null);
      accounts = {
        version,
        list,
        byKey: new Map(list.map((account) => [laneKey(account.tenantId, account.id), account])),
      };
    }
    return accounts.list;
  };
  const lookup: AccountLookup = (tenantId, id) => accounts.byKey.get(laneKey(tenantId, id)) ?? null;

  return (now) => {
    deps.tenants.forget();
    if (now - reclaimedAt >= RECLAIM_EVERY_MS) {
      reclaimedAt = now;
      lanes.flush(); // our own finished sends are not expired leases
      // Nor are the messages still in our hands, however long a send takes.
      const reclaimed = queue.reclaimLeases(now, deps.owner, false, lanes.heldPks());
      if (reclaimed > 0) deps.log.warn({ reclaimed }, 'expired leases reclaimed');
    }
    let claimed = 0;
    let full = false;
    let nextWakeAt: number | null = null;
    for (const account of currentAccounts()) {
      const served = serveAccount(deps, account, now, lookup);
      claimed += served.claimed;
      full ||= served.full;
      if (served.wakeAt !== null)
        nextWakeAt = nextWakeAt === null ? served.wakeAt : Math.min(nextWakeAt, served.wakeAt);
    }
    // A claim that took all it was allowed may have left more due right now: the next step
    // follows at once. One that took less took all that was due; stepping again at once would
    // only run an empty claim (a transaction per arrival when mail trickles in one at a time).
    if (full) return { claimed, nextWakeAt: now };
    return { claimed, nextWakeAt: nextWakeAt === null ? null : Math.max(nextWakeAt, now + 1) };
  };
}
