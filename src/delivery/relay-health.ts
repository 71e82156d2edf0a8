/**
 * Whether each relay answers, as this process sees it (and, in fleet mode, as the other nodes
 * tell it): told by every send's outcome, a relay is unreachable once its sends have had no
 * answer at all (refused, reset, timed out: no reply code) for the account's `failoverAfterSeconds`;
 * any answer, even a refusal, ends that. An unreachable relay is tested (connect, EHLO, AUTH, QUIT;
 * nothing sent) at most once per `failoverAfterSeconds`, and answers again at the first test that
 * passes. In memory, per node.
 */
import type { Account } from '../core/account/index.js';
import type { DeliveryDecision, RelaySignal } from '../core/delivery/index.js';
import type { Logger } from '../core/index.js';
import { laneKey } from './account-lane.js';

type HealthSignal = Extract<RelaySignal, { kind: 'unreachable' | 'answering' }>;

export interface RelayHealthDeps {
  /** A connection test of the account's relay: true when it passed. */
  probe: (account: Account) => Promise<boolean>;
  /** A relay answers again: the dispatcher looks again. */
  wake: () => void;
  log: Logger;
  /** Fleet mode: a relay this node found unreachable, or answering again, for the other nodes. */
  tell?: (signal: HealthSignal) => void;
}

interface Health {
  /** The first of the unanswered sends in a row; null once one was answered. */
  failingSince: number | null;
  lastProbeAt: number;
  probing: boolean;
  /** The fleet knows it unreachable (told by this node, or heard from another): an answer is told too. */
  shared: boolean;
}

/** Another node's word on a relay, applied here. */
function follow(deps: RelayHealthDeps, state: Health, signal: HealthSignal, now: number): void {
  if (signal.kind === 'answering') {
    state.shared = false;
    if (state.failingSince === null) return;
    state.failingSince = null;
    deps.log.info(
      { tenantId: signal.tenantId, accountId: signal.accountId },
      'relay answers again (another node tested it)',
    );
    deps.wake();
    return;
  }
  // Found unreachable elsewhere: fail over now, and leave the first test to the node that found it.
  state.shared = true;
  state.failingSince = Math.min(state.failingSince ?? signal.since, signal.since);
  state.lastProbeAt = Math.max(state.lastProbeAt, now);
  deps.wake();
}

export function createRelayHealth(deps: RelayHealthDeps) {
  const health = new Map<string, Health>();
  const healthOf = (tenantId: string, accountId: string): Health => {
    const key = laneKey(tenantId, accountId);
    let found = health.get(key);
    if (found === undefined) {
      found = { failingSince: null, lastProbeAt: 0, probing: false, shared: false };
      health.set(key, found);
    }
    return found;
  };
  /** The relay answers again: its own mail goes through it, and the fleet is told if it knew otherwise. */
  const answering = (tenantId: string, accountId: string, state: Health, now: number): void => {
    state.failingSince = null;
    if (state.shared) deps.tell?.({ kind: 'answering', tenantId, accountId, at: now });
    state.shared = false;
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
        answering(account.tenantId, account.id, state, state.lastProbeAt);
        deps.log.info(
          { tenantId: account.tenantId, accountId: account.id },
          'relay answers again: its mail is its own',
        );
        deps.wake();
      });
  };

  return {
    /** Whether `account`'s relay has answered nothing for its `failoverAfterSeconds` (the fleet told of it once, and its test run when due). */
    unreachable(account: Account, now: number): boolean {
      const state = health.get(laneKey(account.tenantId, account.id));
      if (state === undefined || state.failingSince === null) return false;
      if (now - state.failingSince < account.failoverAfterSeconds * 1000) return false;
      if (!state.shared) {
        state.shared = true;
        deps.tell?.({
          kind: 'unreachable',
          tenantId: account.tenantId,
          accountId: account.id,
          since: state.failingSince,
        });
      }
      probeIfDue(account, state, now);
      return true;
    },
    /** When the relay of an unreachable `account` is tested next. */
    nextTestAt(account: Account): number | null {
      const state = health.get(laneKey(account.tenantId, account.id));
      return state === undefined || state.failingSince === null
        ? null
        : state.lastProbeAt + account.failoverAfterSeconds * 1000;
    },
    /** A send through `relay` ended so. */
    observe(relay: Account, decision: DeliveryDecision, now: number): void {
      const unanswered = decision.kind === 'deferred' && decision.replyCode === null;
      const state = healthOf(relay.tenantId, relay.id);
      if (!unanswered) {
        if (state.failingSince !== null) answering(relay.tenantId, relay.id, state, now);
        return;
      }
      if (state.failingSince === null) state.failingSince = now;
    },
    /** Another node found a relay unreachable, or answering again (fleet mode): this node follows at once. */
    heard(signal: HealthSignal, now: number): void {
      follow(deps, healthOf(signal.tenantId, signal.accountId), signal, now);
    },
  };
}
