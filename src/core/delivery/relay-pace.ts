/**
 * Adaptive backoff: the pace an account's relay is sent at once it has pushed back
 * (pushback.ts), lowered at once and raised step by step after successes. An
 * additive-increase, multiplicative-decrease rule (AIMD), bounded by the account's
 * configured limit per minute and by a floor:
 *
 *   pushback    the pace becomes `decrease` times the lower of the pace and what the
 *               relay accepted over the last minute (its quota, seen from here), and
 *               sending pauses (1 s, doubled while the probes after it are pushed back
 *               too: a relay whose minute is used up refuses everything until it is over,
 *               and that is no reason to lower the pace again);
 *   success     the pace rises by `raise` times the level it was set to, per minute of
 *               sending, up to the configured limit per minute;
 *   quiet       no pushback for `quietMs` and the pace back where the relay pushed back:
 *               the account sends unpaced again.
 *
 * A refusal of a send launched before the pace went down is not counted again: the pace
 * already answered for it (the sends in flight when the first pushback comes).
 *
 * A pace is a small record these functions change in place, once per send (it is on the
 * relay's path); they read no clock and do no I/O: time comes in as `now`.
 */

export interface PacePolicy {
  /** The fraction of the relay's accepted rate (or of the pace) kept after pushback, in (0, 1). */
  decrease: number;
  /** Never slower than this, in messages per minute. */
  floorPerMinute: number;
  /** Each minute of sending raises the pace by this fraction of the level it was set to. */
  raise: number;
  firstPauseMs: number;
  maxPauseMs: number;
  /** This long without pushback, and the pace back where the relay pushed back: unpaced again. */
  quietMs: number;
}

export const DEFAULT_PACE_POLICY: PacePolicy = {
  decrease: 0.75,
  floorPerMinute: 1,
  raise: 0.1,
  firstPauseMs: 1000,
  maxPauseMs: 60_000,
  quietMs: 600_000,
};

const MINUTE_MS = 60_000;
/** The accepted rate is counted in six slots of ten seconds: the last minute, give or take a slot. */
const SLOT_MS = 10_000;
const SLOTS = 6;

export interface RelayPace {
  /** Messages per minute the relay is sent; null: unpaced (only the configured limits hold). */
  perMinute: number | null;
  /** No send is launched before this instant (epoch ms). */
  nextAt: number;
  /** When pushback last lowered the pace (or paused it); refusals of sends launched before are answered for. */
  loweredAt: number;
  /** The pace set then: raises add fractions of it. */
  level: number;
  /** The relay's accepted rate when it first pushed back: where the pace may go unpaced again. */
  peak: number;
  raisedAt: number;
  /** Accepted since the pace was last lowered: a pushback with none is the same episode (pause longer, keep the pace). */
  acceptedSinceLowered: number;
  pauseMs: number;
  /** Pushbacks that changed the pace or the pause, since the daemon started. */
  pushbacks: number;
  slotAt: number;
  accepted: number[];
}

export function freshPace(policy: PacePolicy): RelayPace {
  return {
    perMinute: null,
    nextAt: 0,
    loweredAt: Number.NEGATIVE_INFINITY,
    level: 0,
    peak: 0,
    raisedAt: 0,
    acceptedSinceLowered: 0,
    pauseMs: policy.firstPauseMs,
    pushbacks: 0,
    slotAt: 0,
    accepted: new Array<number>(SLOTS).fill(0),
  };
}

/** Moves the accepted slots up to `now`: slots that ended more than a minute ago are emptied. */
function rollSlots(pace: RelayPace, now: number): void {
  const slot = Math.floor(now / SLOT_MS);
  if (slot <= pace.slotAt) return;
  for (let next = pace.slotAt + 1, emptied = 0; next <= slot && emptied < SLOTS; next += 1, emptied += 1)
    pace.accepted[next % SLOTS] = 0;
  pace.slotAt = slot;
}

/** What the relay accepted over about the last minute. */
export function acceptedLastMinute(pace: RelayPace, now: number): number {
  rollSlots(pace, now);
  return pace.accepted.reduce((sum, count) => sum + count, 0);
}

/** Whether a send may be launched now. */
export const mayLaunch = (pace: RelayPace, now: number): boolean => now >= pace.nextAt;

/** A send launched now: the next one waits its spacing at the current pace. */
export function launched(pace: RelayPace, now: number): void {
  if (pace.perMinute === null) return;
  pace.nextAt = Math.max(pace.nextAt, now) + MINUTE_MS / pace.perMinute;
}

/** How many messages to claim ahead at this pace (two seconds' worth, at least one); null: unpaced. */
export const claimAhead = (pace: RelayPace): number | null =>
  pace.perMinute === null ? null : Math.max(1, Math.ceil((pace.perMinute * 2000) / MINUTE_MS));

const bounded = (perMinute: number, policy: PacePolicy, ceiling: number | null): number =>
  Math.max(policy.floorPerMinute, ceiling === null ? perMinute : Math.min(ceiling, perMinute));

/** The relay accepted a send at `now`. */
export function accepted(pace: RelayPace, policy: PacePolicy, now: number, ceiling: number | null): void {
  rollSlots(pace, now);
  pace.accepted[pace.slotAt % SLOTS] = (pace.accepted[pace.slotAt % SLOTS] ?? 0) + 1;
  if (pace.perMinute === null) return;
  pace.acceptedSinceLowered += 1;
  pace.pauseMs = policy.firstPauseMs;
  // Additive increase over the time spent sending, at most a minute's step at once (after an idle hour, one step).
  const elapsed = Math.min(MINUTE_MS, Math.max(0, now - pace.raisedAt));
  pace.raisedAt = now;
  pace.perMinute = bounded(pace.perMinute + (pace.level * policy.raise * elapsed) / MINUTE_MS, policy, ceiling);
  const settled = ceiling === null ? pace.perMinute >= pace.peak : pace.perMinute >= ceiling;
  if (settled && now - pace.loweredAt >= policy.quietMs) pace.perMinute = null;
}

export interface Pushback {
  /** When the refused send was launched. */
  sentAt: number;
  now: number;
  /** A wait the relay asked for ("try again in 30 seconds"). */
  hintMs: number | null;
  /** The account's configured limit per minute, null when it has none. */
  ceiling: number | null;
}

/** The relay pushed back on a send; answers whether the pace (or its pause) changed. */
export function pushedBack(pace: RelayPace, policy: PacePolicy, input: Pushback): boolean {
  const { sentAt, now } = input;
  // Launched before the last change: in flight when it came, already answered for.
  if (sentAt < pace.loweredAt) return false;
  const relayTook = acceptedLastMinute(pace, now);
  if (pace.perMinute === null) {
    pace.peak = Math.max(relayTook, policy.floorPerMinute);
    pace.perMinute = bounded(pace.peak * policy.decrease, policy, input.ceiling);
    pace.pauseMs = policy.firstPauseMs;
  } else if (pace.acceptedSinceLowered > 0) {
    // Accepted at this pace, then pushed back again: the pace is still too high.
    pace.perMinute = bounded(Math.min(pace.perMinute, relayTook) * policy.decrease, policy, input.ceiling);
  }
  // else: a probe after the pause, refused like the sends before it: the same episode, pause longer.
  pace.level = pace.perMinute ?? policy.floorPerMinute;
  pace.loweredAt = now;
  pace.raisedAt = now;
  pace.acceptedSinceLowered = 0;
  // The relay's own "try again in N seconds" is honoured up to the longest pause: a pace never starves the account.
  const pause = Math.max(pace.pauseMs, Math.min(policy.maxPauseMs, input.hintMs ?? 0));
  pace.nextAt = Math.max(pace.nextAt, now + pause);
  pace.pauseMs = Math.min(policy.maxPauseMs, pace.pauseMs * 2);
  pace.pushbacks += 1;
  return true;
}

/**
 * Another node's pushback from the same relay (fleet mode): this node slows down too, by what it
 * sent the relay itself, unless its pace changed within the last second (the same episode, told
 * by several nodes at once or heard after its own). A node that sent it nothing lately has no
 * pace of its own to lower (a floor pace would starve it): it holds off for the pause only, and
 * paces itself if the relay then pushes back on it.
 */
export const SAME_EPISODE_MS = 1000;
export function heardPushback(
  pace: RelayPace,
  policy: PacePolicy,
  input: { now: number; hintMs: number | null; ceiling: number | null },
): boolean {
  const { now } = input;
  if (now - pace.loweredAt < SAME_EPISODE_MS) return false;
  if (pace.perMinute === null && acceptedLastMinute(pace, now) === 0) {
    pace.nextAt = Math.max(
      pace.nextAt,
      now + Math.max(policy.firstPauseMs, Math.min(policy.maxPauseMs, input.hintMs ?? 0)),
    );
    pace.loweredAt = now;
    return true;
  }
  return pushedBack(pace, policy, { sentAt: now, now, hintMs: input.hintMs, ceiling: input.ceiling });
}

/** A pace as people and metrics read it: messages a minute to a tenth. */
export const shownPace = (perMinute: number): number => Math.round(perMinute * 10) / 10;

/** An account's pace as `/status`, the metrics and "why is it waiting" show it: only while it is paced. */
export interface AccountPace {
  tenantId: string;
  accountId: string;
  perMinute: number;
  /** No send before this instant (epoch ms): a pause after pushback, or the spacing at this pace. */
  nextAt: number;
  /** When pushback last lowered the pace. */
  since: number;
  pushbacks: number;
}

/** The paces this process holds, read by the edges. */
export interface AccountPaces {
  of(tenantId: string, accountId: string): AccountPace | null;
  all(): AccountPace[];
}
