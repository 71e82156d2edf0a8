/**
 * Failover as this process runs it (core/delivery/failover.ts decides): which relays are
 * unreachable, told by every send's outcome, and the connection tests that bring one back.
 * A relay is unreachable once its sends have had no answer at all (refused, reset, timed out:
 * no reply code) for the account's `failoverAfterSeconds`; any answer, even a refusal, ends
 * that. While its mail goes through a fallback it is tested (connect, EHLO, AUTH, QUIT; nothing
 * sent) as often, and takes its mail back at the first test that passes. In memory, per node:
 * after a restart an unreachable relay is found out again by its first sends.
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
} from '../core/delivery/index.js';
import type { Logger } from '../core/index.js';
import { laneKey } from './account-lane.js';

export interface RelayFailoverDeps {
  /** A connection test of the account's relay: true when it passed. */
  probe: (account: Account) => Promise<boolean>;
  /** The account's usage in its windows now. */
  usage: (tenantId: string, accountId: string, now: number) => Usage;
  /** A relay came back: the dispatcher looks again. */
  wake: () => void;
  log: Logger;
}

interface Health {
  /** The first of the unanswered sends in a row; null once one was answered. */
  failingSince: number | null;
  lastProbeAt: number;
  probing: boolean;
}

/** `of` and `all`: the accounts whose mail goes through a fallback now. */
export interface RelayFailover extends AccountFailovers {
  /** Whose relay sends `account`'s mail now (null: none may); `lookup` finds the tenant's other accounts. */
  relayFor(account: Account, lookup: (tenantId: string, id: string) => Account | null, now: number): Account | null;
  /** A send through `relay` ended so. */
  observe(relay: Account, decision: DeliveryDecision, now: number): void;
}

export function createRelayFailover(deps: RelayFailoverDeps): RelayFailover {
  const health = new Map<string, Health>();
  const routes = new Map<string, AccountFailover>();
  const healthOf = (account: Account): Health => {
    const key = laneKey(account.tenantId, account.id);
    let found = health.get(key);
    if (found === undefined) {
      found = { failingSince: null, lastProbeAt: 0, probing: false };
      health.set(key, found);
    }
    return found;
  };

  /** Tests an unreachable relay at most once per `failoverAfterSeconds`, one test at a time. */
  const probeIfDue = (account: Account, state: Health, now: number): void => {
    if (state.probing || now - state.lastProbeAt < account.failoverAfterSeconds * 1000) return;
    state.probing = true;
    state.lastProbeAt = now;
    void deps
      .probe(account)
      .catch(() => false)
      .then((passed) => {
        state.probing = false;
        if (!passed || state.failingSince === null) return;
        state.failingSince = null;
        deps.log.info(
          { tenantId: account.tenantId, accountId: account.id },
          'relay answers again: its mail is its own',
        );
        deps.wake();
      });
  };

  const conditions = (now: number): RelayConditions => ({
    unreachable(account) {
      const state = health.get(laneKey(account.tenantId, account.id));
      if (state === undefined || state.failingSince === null) return false;
      if (now - state.failingSince < account.failoverAfterSeconds * 1000) return false;
      probeIfDue(account, state, now);
      return true;
    },
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
    of: (tenantId, accountId) => routes.get(laneKey(tenantId, accountId)) ?? null,
    all: () => [...routes.values()],
    observe(relay, decision, now) {
      const unanswered = decision.kind === 'deferred' && decision.replyCode === null;
      const state = healthOf(relay);
      if (!unanswered) {
        state.failingSince = null;
        return;
      }
      if (state.failingSince === null) state.failingSince = now;
    },
  };
}
