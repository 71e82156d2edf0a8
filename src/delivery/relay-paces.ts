/**
 * The adaptive paces of this process's accounts (core/delivery/relay-pace.ts), by
 * tenant and account: told of every launch and every outcome by the lanes, asked by
 * the dispatcher whether an account may claim and launch, and read by `/status`, the
 * metrics and "why is it waiting". In memory: a restart sends unpaced until the relay
 * pushes back again, which it does at once if it still has reason to.
 */
import type { Account } from '../core/account/index.js';
import {
  accepted,
  claimAhead,
  freshPace,
  heardPushback,
  isPushback,
  launched,
  mayLaunch,
  pushedBack,
  shownPace,
  type DeliveryDecision,
  type PacePolicy,
  type RelayPace,
  type RelaySignal,
} from '../core/delivery/index.js';
import type { AccountPace, AccountPaces } from '../core/delivery/index.js';
import type { Logger } from '../core/index.js';
import { laneKey } from './account-lane.js';

type PacedAccount = Pick<Account, 'tenantId' | 'id' | 'limitPerMinute'>;

/** What the dispatcher may do for an account now. */
export interface PaceGate {
  /** Epoch ms before which nothing is launched; null: now. */
  waitUntil: number | null;
  /** How many to hold claimed at this pace; null: the lane's own window. */
  claimAhead: number | null;
}

export interface RelayPaces extends AccountPaces {
  gate(account: PacedAccount, now: number): PaceGate;
  mayLaunch(account: PacedAccount, now: number): boolean;
  /** When the account's next send may be launched; null when it is not paced. */
  nextLaunchAt(account: PacedAccount): number | null;
  launched(account: PacedAccount, now: number): void;
  /** A send's outcome: `sentAt` is when it was launched. */
  observe(account: PacedAccount, decision: DeliveryDecision, sentAt: number, now: number): void;
  /** Another node's relay pushed back (fleet mode): this node slows down too. */
  heard(account: PacedAccount, signal: Extract<RelaySignal, { kind: 'pushback' }>, now: number): void;
}

const UNPACED: PaceGate = { waitUntil: null, claimAhead: null };

/** A send's outcome on its account's pace: an acceptance counts, a pushback lowers it (and the fleet is told). */
function observe(
  deps: {
    policy: PacePolicy;
    log: Logger;
    tell?: ((signal: Extract<RelaySignal, { kind: 'pushback' }>) => void) | undefined;
  },
  pace: RelayPace,
  account: PacedAccount,
  outcome: { decision: DeliveryDecision; sentAt: number; now: number },
): void {
  const { decision, sentAt, now } = outcome;
  if (decision.kind === 'sent') {
    accepted(pace, deps.policy, now, account.limitPerMinute);
    return;
  }
  if (decision.kind !== 'deferred' || !isPushback(decision)) return;
  const wasPaced = pace.perMinute;
  const hintMs = decision.retryAfterMs;
  if (!pushedBack(pace, deps.policy, { sentAt, now, hintMs, ceiling: account.limitPerMinute })) return;
  deps.tell?.({ kind: 'pushback', tenantId: account.tenantId, accountId: account.id, at: now, hintMs });
  if (wasPaced !== pace.perMinute)
    deps.log.warn(
      {
        tenantId: account.tenantId,
        accountId: account.id,
        perMinute: shownPace(pace.perMinute ?? 0),
        replyCode: decision.replyCode,
        enhancedStatus: decision.enhancedStatus,
      },
      'relay pushed back: pace lowered',
    );
}

/**
 * `tell`: a pushback this node saw and acted on, for the other nodes (fleet mode); absent alone.
 */
export function createRelayPaces(
  policy: PacePolicy,
  log: Logger,
  tell?: (signal: Extract<RelaySignal, { kind: 'pushback' }>) => void,
): RelayPaces {
  const paces = new Map<string, { tenantId: string; accountId: string; pace: RelayPace }>();
  const paceOf = (account: PacedAccount): RelayPace => {
    const key = laneKey(account.tenantId, account.id);
    let entry = paces.get(key);
    if (entry === undefined) {
      entry = { tenantId: account.tenantId, accountId: account.id, pace: freshPace(policy) };
      paces.set(key, entry);
    }
    return entry.pace;
  };
  const viewOf = (tenantId: string, accountId: string, pace: RelayPace): AccountPace | null =>
    pace.perMinute === null
      ? null
      : {
          tenantId,
          accountId,
          perMinute: pace.perMinute,
          nextAt: pace.nextAt,
          since: pace.loweredAt,
          pushbacks: pace.pushbacks,
        };

  return {
    gate(account, now) {
      const pace = paceOf(account);
      if (pace.perMinute === null && pace.nextAt <= now) return UNPACED;
      return { waitUntil: pace.nextAt > now ? pace.nextAt : null, claimAhead: claimAhead(pace) };
    },
    mayLaunch: (account, now) => mayLaunch(paceOf(account), now),
    nextLaunchAt(account) {
      const pace = paceOf(account);
      return pace.perMinute === null ? null : pace.nextAt;
    },
    launched: (account, now) => launched(paceOf(account), now),
    observe: (account, decision, sentAt, now) =>
      observe({ policy, log, tell }, paceOf(account), account, { decision, sentAt, now }),
    heard(account, signal, now) {
      const pace = paceOf(account);
      const wasPaced = pace.perMinute;
      if (!heardPushback(pace, policy, { now, hintMs: signal.hintMs, ceiling: account.limitPerMinute })) return;
      if (wasPaced !== pace.perMinute)
        log.warn(
          { tenantId: account.tenantId, accountId: account.id, perMinute: shownPace(pace.perMinute ?? 0) },
          'relay pushed back on another node: pace lowered here too',
        );
    },
    of(tenantId, accountId) {
      const entry = paces.get(laneKey(tenantId, accountId));
      return entry === undefined ? null : viewOf(tenantId, accountId, entry.pace);
    },
    all: () => [...paces.values()].flatMap(({ tenantId, accountId, pace }) => viewOf(tenantId, accountId, pace) ?? []),
  };
}
