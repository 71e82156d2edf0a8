/**
 * Failover as this process runs it (core/delivery/failover.ts decides): whose relay sends each
 * account's mail now, from whether relays answer (relay-health.ts) and their limits, and the
 * accounts failed over, for /status. While an account's mail goes through a fallback for want of
 * an answer its relay is tested as often, and takes its mail back at the first test that passes.
 * In memory, per node: after a restart an unreachable relay is found out again by its first sends
 * (or, in fleet mode, heard of from the node that found it).
 */
import { availableBudget, type Account, type Usage } from '../core/account/index.js';
import {
  isLimited,
  limitsOf,
  relayFor,
  type AccountFailover,
  type AccountFailovers,
  type DeliveryDecision,
  type RelayConditions,
  type RelaySignal,
} from '../core/delivery/index.js';
import { laneKey } from './account-lane.js';
import { createRelayHealth, type RelayHealthDeps } from './relay-health.js';

export interface RelayFailoverDeps extends RelayHealthDeps {
  /** The account's usage in its windows now. */
  usage: (tenantId: string, accountId: string, now: number) => Usage;
}

/** `of` and `all`: the accounts whose mail goes through a fallback now. */
export interface RelayFailover extends AccountFailovers {
  /** Whose relay sends `account`'s mail now (null: none may); `lookup` finds the tenant's other accounts. */
  relayFor(account: Account, lookup: (tenantId: string, id: string) => Account | null, now: number): Account | null;
  /** A send through `relay` ended so. */
  observe(relay: Account, decision: DeliveryDecision, now: number): void;
  /**
   * When the dispatcher should step for `account`'s relay test, while its mail goes through a
   * fallback for want of an answer (an idle node tests it too); null otherwise.
   */
  nextTestAt(account: Account): number | null;
  /** Another node found a relay unreachable, or answering again (fleet mode): this node follows at once. */
  heard(signal: Extract<RelaySignal, { kind: 'unreachable' | 'answering' }>, now: number): void;
}

export function createRelayFailover(deps: RelayFailoverDeps): RelayFailover {
  const routes = new Map<string, AccountFailover>();
  const health = createRelayHealth(deps);
  const conditions = (now: number): RelayConditions => ({
    unreachable: (account) => health.unreachable(account, now),
    overLimit(account) {
      const limits = limitsOf(account, now);
      return isLimited(limits) && availableBudget(limits, deps.usage(account.tenantId, account.id, now)) === 0;
    },
  });

  return {
    relayFor(account, lookup, now) {
      const fallbacks = account.fallbackAccounts.flatMap((id) => lookup(account.tenantId, id) ?? []);
      const { relay, cause } = relayFor(account, fallbacks, conditions(now));
      const key = laneKey(account.tenantId, account.id);
      if (relay === null || relay === account || cause === null) routes.delete(key);
      else if (routes.get(key)?.via !== relay.id) {
        routes.set(key, { tenantId: account.tenantId, accountId: account.id, via: relay.id, cause, since: now });
        deps.log.warn({ tenantId: account.tenantId, accountId: account.id, via: relay.id, cause }, 'failing over');
      }
      return relay;
    },
    nextTestAt(account) {
      const route = routes.get(laneKey(account.tenantId, account.id));
      return route?.cause === 'unreachable' ? health.nextTestAt(account) : null;
    },
    of: (tenantId, accountId) => routes.get(laneKey(tenantId, accountId)) ?? null,
    all: () => [...routes.values()],
    observe: health.observe,
    heard: health.heard,
  };
}
