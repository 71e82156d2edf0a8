/**
 * Per-destination limits in the dispatcher: for a relay account with destination rules, the
 * budget one claim decides with (its destinations' usage, fleet leases folded in), the spread of
 * held messages kept from claim to claim, and each destination's cap on sends in flight. A relay
 * without rules costs nothing here: no budget, no caps, today's claim.
 */
import { destinationWindows, type Account, type DestinationLimit, type Usage } from '../core/account/index.js';
import { destinationBudget, isLimited, type DestinationBudget } from '../core/delivery/index.js';
import type { FleetLimitGate, GatedAccount } from '../core/fleet/index.js';
import type { MessageQueue } from '../core/message/index.js';
import { laneKey } from './account-lane.js';

export interface RelayDestinations {
  /** The budget of `relay`'s destinations for one claim; undefined when it has none. */
  budgetFor(relay: Account, now: number): DestinationBudget | undefined;
  /** After the claim: what it admitted spent from the fleet's leases, and a chunk asked for where it held for one. */
  claimed(relay: Account, budget: DestinationBudget, now: number): void;
  /** Per destination with `max_connections`, the sends in flight it allows on this node; undefined: none capped. */
  capsOf(relay: Account, now: number): ReadonlyMap<string, number> | undefined;
}

const gated = (relay: Account, limit: DestinationLimit): GatedAccount => ({
  tenantId: relay.tenantId,
  id: relay.id,
  maxConnections: limit.maxConnections ?? relay.maxConnections,
  destination: limit.name,
});

export function createRelayDestinations(deps: {
  queue: Pick<MessageQueue, 'destinationUsage'>;
  /** Fleet mode: the destinations' windows are counted fleet-wide, like the accounts'. */
  gate?: FleetLimitGate;
}): RelayDestinations {
  const { queue, gate } = deps;
  /**
   * Per relay account, the next slot of each destination's spread (core/delivery/destination-budget.ts),
   * begun again when the account is saved (its limits may have changed: a new spread follows them).
   */
  const tails = new Map<string, { savedAt: number; slots: Map<string, number> }>();
  const tailsOf = (relay: Account): Map<string, number> => {
    const key = laneKey(relay.tenantId, relay.id);
    const held = tails.get(key);
    if (held !== undefined && held.savedAt === relay.updatedAt) return held.slots;
    const fresh = { savedAt: relay.updatedAt, slots: new Map<string, number>() };
    tails.set(key, fresh);
    return fresh.slots;
  };

  return {
    budgetFor(relay, now) {
      const limits = relay.destinationLimits;
      if (limits.length === 0) return undefined;
      const local = queue.destinationUsage(relay.tenantId, relay.id, now);
      if (gate === undefined) return destinationBudget({ limits, usage: local, tails: tailsOf(relay), now });
      const usage = new Map<string, Usage>();
      const awaiting = new Set<string>();
      const leaseBound = new Set<string>();
      for (const limit of limits) {
        const windows = destinationWindows(limit);
        if (!isLimited(windows)) continue;
        const fleet = gate.budget(
          gated(relay, limit),
          windows,
          local.get(limit.name) ?? { minute: 0, hour: 0, day: 0 },
          now,
        );
        if (fleet.kind === 'awaiting_lease') awaiting.add(limit.name);
        else {
          usage.set(limit.name, fleet.usage);
          if (fleet.leaseBound) leaseBound.add(limit.name);
        }
      }
      return destinationBudget({ limits, usage, awaiting, leaseBound, tails: tailsOf(relay), now });
    },
    claimed(relay, budget, now) {
      if (gate === undefined) return;
      for (const limit of relay.destinationLimits) {
        const windows = destinationWindows(limit);
        if (!isLimited(windows)) continue;
        const count = budget.taken().get(limit.name) ?? 0;
        if (count > 0) gate.claimed(gated(relay, limit), windows, count, now);
        if (budget.heldFor().has(limit.name)) gate.want(gated(relay, limit), windows, now);
      }
    },
    capsOf(relay, now) {
      const capped = relay.destinationLimits.filter((limit) => limit.maxConnections !== null);
      if (capped.length === 0) return undefined;
      return new Map(
        capped.map((limit) => [
          limit.name,
          gate === undefined ? (limit.maxConnections as number) : gate.connections(gated(relay, limit), now),
        ]),
      );
    },
  };
}
