/**
 * When a tenant's next report round is due, and how an answer moves that.
 * One LaneState per tenant; the loop keeps it and persists it, this decides.
 *
 *   - Real reports go as soon as they exist, unless the client asked for quiet
 *     (`next_sync_after`): then they wait until the quiet ends, but never more
 *     than `maxHoldMs` after the oldest of them happened.
 *   - With nothing to report, a heartbeat every `syncIntervalMs` after the last
 *     contact, and none before the quiet ends.
 *   - A failed round backs off exponentially (with jitter) whatever it carried.
 *   - `queued > 0` in an answer asks for another round at once: granted at most
 *     `maxFollowups` times in a row, so a client cannot keep us busy forever.
 */

import { exponentialBackoff } from '../delivery/retry-policy.js';

export interface ReportPolicy {
  syncIntervalMs: number;
  retryInitialMs: number;
  retryMaxMs: number;
  /** Fraction (0..1) by which each backoff is randomised up or down. */
  retryJitter: number;
  maxFollowups: number;
  maxHoldMs: number;
}

export interface LaneState {
  /** Consecutive failed rounds. */
  failures: number;
  /** Backoff after a failure: no round before this. */
  retryAt: number | null;
  /** The client's do-not-disturb (`next_sync_after`). */
  dndUntil: number | null;
  /** The last acknowledged round; heartbeats count from it. */
  lastSuccessAt: number | null;
  /** Immediate rounds granted in a row for `queued > 0`; above 0, the next round is due at once. */
  followups: number;
}

export const freshLane = (): LaneState => ({
  failures: 0,
  retryAt: null,
  dndUntil: null,
  lastSuccessAt: null,
  followups: 0,
});

/** When the next round is due. `oldestPendingAt` is the oldest unreported event, or null when there is none. */
export function nextRoundAt(
  lane: LaneState,
  policy: ReportPolicy,
  oldestPendingAt: number | null,
  now: number,
): number {
  if (lane.retryAt !== null && lane.retryAt > now) return lane.retryAt;
  // The last answer asked for another round (`queued > 0`) and it was granted.
  if (lane.followups > 0) return now;
  const quietUntil = lane.dndUntil !== null && lane.dndUntil > now ? lane.dndUntil : null;
  if (oldestPendingAt !== null) {
    return quietUntil === null ? now : Math.max(now, Math.min(quietUntil, oldestPendingAt + policy.maxHoldMs));
  }
  const heartbeat = lane.lastSuccessAt === null ? now : lane.lastSuccessAt + policy.syncIntervalMs;
  return Math.max(now, heartbeat, quietUntil ?? 0);
}

export interface Acknowledgement {
  queued: number;
  nextSyncAfter: number | null;
}

/** The lane after an acknowledged round, and whether the client asked for another one at once. */
export function afterSuccess(
  lane: LaneState,
  reply: Acknowledgement,
  policy: ReportPolicy,
  now: number,
): { lane: LaneState; followUp: boolean } {
  const followUp = reply.queued > 0 && lane.followups < policy.maxFollowups;
  return {
    lane: {
      failures: 0,
      retryAt: null,
      dndUntil: reply.nextSyncAfter !== null && reply.nextSyncAfter > now ? reply.nextSyncAfter : null,
      lastSuccessAt: now,
      followups: followUp ? lane.followups + 1 : 0,
    },
    followUp,
  };
}

/** The lane after a failed round: exponential backoff from `retryInitialMs`, capped at `retryMaxMs`. */
export function afterFailure(lane: LaneState, policy: ReportPolicy, now: number, random: number): LaneState {
  const failures = lane.failures + 1;
  const wait = exponentialBackoff(
    failures,
    { initialMs: policy.retryInitialMs, maxMs: policy.retryMaxMs, jitter: policy.retryJitter },
    random,
  );
  return { ...lane, failures, retryAt: now + wait, followups: 0 };
}
