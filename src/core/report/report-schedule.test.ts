import { describe, expect, it } from 'vitest';
import { afterFailure, afterSuccess, freshLane, nextRoundAt, type ReportPolicy } from './report-schedule.js';

const policy: ReportPolicy = {
  syncIntervalMs: 300_000,
  retryInitialMs: 2000,
  retryMaxMs: 60_000,
  retryJitter: 0,
  maxFollowups: 2,
  maxHoldMs: 60_000,
};
const NOW = 1_000_000_000;

describe('nextRoundAt', () => {
  it('sends pending events at once, and a first heartbeat at once', () => {
    expect(nextRoundAt(freshLane(), policy, NOW - 5, NOW)).toBe(NOW);
    expect(nextRoundAt(freshLane(), policy, null, NOW)).toBe(NOW);
  });

  it('heartbeats every sync interval after the last success', () => {
    const lane = { ...freshLane(), lastSuccessAt: NOW - 100_000 };
    expect(nextRoundAt(lane, policy, null, NOW)).toBe(NOW + 200_000);
    expect(nextRoundAt(lane, policy, NOW, NOW)).toBe(NOW);
  });

  it('do-not-disturb holds heartbeats until it ends, and real reports at most maxHoldMs after the oldest', () => {
    const lane = { ...freshLane(), lastSuccessAt: NOW, dndUntil: NOW + 3_600_000 };
    expect(nextRoundAt(lane, policy, null, NOW)).toBe(NOW + 3_600_000);
    expect(nextRoundAt(lane, policy, NOW - 10_000, NOW)).toBe(NOW + 50_000);
    expect(nextRoundAt(lane, policy, NOW - 120_000, NOW)).toBe(NOW);
    // A quiet shorter than the hold ends first.
    expect(nextRoundAt({ ...lane, dndUntil: NOW + 5000 }, policy, NOW, NOW)).toBe(NOW + 5000);
    // A quiet in the past is no quiet.
    expect(nextRoundAt({ ...lane, dndUntil: NOW - 1 }, policy, NOW, NOW)).toBe(NOW);
  });

  it('a backoff holds everything, and a granted follow-up goes at once', () => {
    expect(nextRoundAt({ ...freshLane(), retryAt: NOW + 8000 }, policy, NOW - 1, NOW)).toBe(NOW + 8000);
    expect(
      nextRoundAt({ ...freshLane(), lastSuccessAt: NOW, followups: 1, dndUntil: NOW + 10_000 }, policy, null, NOW),
    ).toBe(NOW);
  });
});

describe('afterSuccess and afterFailure', () => {
  it('backs off exponentially up to the maximum, and a success clears it', () => {
    let lane = freshLane();
    const waits: number[] = [];
    for (let failure = 0; failure < 7; failure += 1) {
      lane = afterFailure(lane, policy, NOW, 0.5);
      waits.push((lane.retryAt as number) - NOW);
    }
    expect(waits).toEqual([2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000]);
    expect(lane.failures).toBe(7);
    const { lane: healed } = afterSuccess(lane, { queued: 0, nextSyncAfter: null }, policy, NOW);
    expect(healed).toEqual({ failures: 0, retryAt: null, dndUntil: null, lastSuccessAt: NOW, followups: 0 });
  });

  it('jitter spreads a backoff by the configured fraction both ways', () => {
    const jittery = { ...policy, retryJitter: 0.5 };
    expect((afterFailure(freshLane(), jittery, NOW, 0).retryAt as number) - NOW).toBe(1000);
    expect((afterFailure(freshLane(), jittery, NOW, 0.999_999).retryAt as number) - NOW).toBe(3000);
  });

  it('grants maxFollowups immediate rounds in a row for queued > 0, then falls back to the interval', () => {
    let lane = freshLane();
    const granted: boolean[] = [];
    for (let round = 0; round < 4; round += 1) {
      const next = afterSuccess(lane, { queued: 9, nextSyncAfter: null }, policy, NOW);
      granted.push(next.followUp);
      lane = next.lane;
    }
    expect(granted).toEqual([true, true, false, true]);
    expect(afterSuccess({ ...lane, followups: 1 }, { queued: 0, nextSyncAfter: null }, policy, NOW)).toMatchObject({
      followUp: false,
      lane: { followups: 0 },
    });
  });

  it('keeps next_sync_after only when it lies in the future', () => {
    expect(afterSuccess(freshLane(), { queued: 0, nextSyncAfter: NOW + 1 }, policy, NOW).lane.dndUntil).toBe(NOW + 1);
    expect(afterSuccess(freshLane(), { queued: 0, nextSyncAfter: NOW }, policy, NOW).lane.dndUntil).toBeNull();
  });
});
