import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  accepted,
  acceptedLastMinute,
  claimAhead,
  DEFAULT_PACE_POLICY,
  freshPace,
  heardPushback,
  launched,
  mayLaunch,
  pushedBack,
  type RelayPace,
} from './relay-pace.js';

const policy = DEFAULT_PACE_POLICY;
const T0 = 1_764_000_000_000;

/** A pace whose relay accepted `count` sends, one every `everyMs`, from T0; answers the instant after the last. */
function acceptedRun(pace: RelayPace, count: number, everyMs: number, ceiling: number | null = null): number {
  for (let index = 0; index < count; index += 1) accepted(pace, policy, T0 + index * everyMs, ceiling);
  return T0 + count * everyMs;
}

describe('relay pace (adaptive backoff)', () => {
  it('is unpaced until the relay pushes back, then keeps a fraction of what the relay took in the last minute', () => {
    const pace = freshPace(policy);
    const now = acceptedRun(pace, 60, 100);
    expect(pace.perMinute).toBeNull();
    expect(claimAhead(pace)).toBeNull();
    expect(mayLaunch(pace, now)).toBe(true);
    expect(acceptedLastMinute(pace, now)).toBe(60);

    expect(pushedBack(pace, policy, { sentAt: now - 5, now, hintMs: null, ceiling: null })).toBe(true);
    expect(pace.perMinute).toBe(45);
    // A pause first (1 s), then one send every 60/45 s.
    expect(mayLaunch(pace, now + 999)).toBe(false);
    expect(mayLaunch(pace, now + 1000)).toBe(true);
    launched(pace, now + 1000);
    expect(pace.nextAt).toBeCloseTo(now + 1000 + 60_000 / 45);
    expect(claimAhead(pace)).toBe(2);
  });

  it('does not count again the refusals of sends launched before the pace went down', () => {
    const pace = freshPace(policy);
    const now = acceptedRun(pace, 60, 100);
    pushedBack(pace, policy, { sentAt: now - 5, now, hintMs: null, ceiling: null });
    const after = { ...pace, accepted: [...pace.accepted] };
    expect(pushedBack(pace, policy, { sentAt: now - 3, now: now + 50, hintMs: null, ceiling: null })).toBe(false);
    expect(pace).toEqual(after);
  });

  it('pauses longer, at the same pace, while the probes after a pause are refused too (a used-up minute)', () => {
    const pace = freshPace(policy);
    let now = acceptedRun(pace, 60, 100);
    pushedBack(pace, policy, { sentAt: now, now, hintMs: null, ceiling: null });
    const pauses: number[] = [];
    for (let probe = 0; probe < 6; probe += 1) {
      now = pace.nextAt;
      launched(pace, now);
      pushedBack(pace, policy, { sentAt: now, now: now + 10, hintMs: null, ceiling: null });
      pauses.push(pace.nextAt - (now + 10));
      now += 10;
    }
    expect(pace.perMinute).toBe(45);
    expect(pauses).toEqual([2000, 4000, 8000, 16_000, 32_000, 60_000]);
  });

  it('lowers the pace again when the relay pushes back after accepting at it, and honours its hint up to the longest pause', () => {
    const pace = freshPace(policy);
    let now = acceptedRun(pace, 60, 100);
    pushedBack(pace, policy, { sentAt: now, now, hintMs: null, ceiling: null });
    now += 61_000;
    accepted(pace, policy, now, null);
    pushedBack(pace, policy, { sentAt: now + 1, now: now + 2, hintMs: 3_600_000, ceiling: null });
    // min(pace, what the relay took in the last minute: 1) * 0.75, never under the floor.
    expect(pace.perMinute).toBe(1);
    expect(pace.nextAt).toBe(now + 2 + policy.maxPauseMs);
  });

  it('rises by a tenth of its level per minute of sending, up to the configured limit, and unpaces after a quiet spell', () => {
    const pace = freshPace(policy);
    let now = acceptedRun(pace, 100, 100, 200);
    const limited = freshPace(policy);
    const then = acceptedRun(limited, 100, 100, 30);
    pushedBack(limited, policy, { sentAt: then, now: then, hintMs: null, ceiling: 30 });
    expect(limited.perMinute).toBe(30);
    pushedBack(pace, policy, { sentAt: now, now, hintMs: null, ceiling: 200 });
    expect(pace.perMinute).toBe(75);
    for (let minute = 1; minute <= 5; minute += 1) accepted(pace, policy, now + minute * 60_000, 200);
    expect(pace.perMinute).toBeCloseTo(75 + 5 * 7.5);
    now += 5 * 60_000;
    for (let minute = 1; minute <= 30; minute += 1) accepted(pace, policy, now + minute * 60_000, 200);
    // At the ceiling since well before the quiet spell ended: unpaced again.
    expect(pace.perMinute).toBeNull();
  });

  it('never goes above the configured limit per minute nor below the floor, and never holds an account back longer than a pause and one spacing', () => {
    type Step =
      | { kind: 'accept'; afterMs: number; count: number }
      | { kind: 'pushback'; afterMs: number; sentBeforeMs: number; hintMs: number | null }
      | { kind: 'launch'; afterMs: number };
    const step: fc.Arbitrary<Step> = fc.oneof(
      fc.record({
        kind: fc.constant('accept' as const),
        afterMs: fc.integer({ min: 0, max: 120_000 }),
        count: fc.integer({ min: 1, max: 300 }),
      }),
      fc.record({
        kind: fc.constant('pushback' as const),
        afterMs: fc.integer({ min: 0, max: 120_000 }),
        sentBeforeMs: fc.integer({ min: 0, max: 5000 }),
        hintMs: fc.option(fc.integer({ min: 0, max: 7_200_000 })),
      }),
      fc.record({ kind: fc.constant('launch' as const), afterMs: fc.integer({ min: 0, max: 120_000 }) }),
    );
    fc.assert(
      fc.property(fc.option(fc.integer({ min: 1, max: 200 })), fc.array(step, { maxLength: 200 }), (ceiling, steps) => {
        const pace = freshPace(policy);
        let now = T0;
        for (const next of steps) {
          now += next.afterMs;
          if (next.kind === 'accept') {
            // A burst: one every 10 ms.
            for (let index = 0; index < next.count; index += 1) accepted(pace, policy, (now += 10), ceiling);
          } else if (next.kind === 'launch') {
            if (mayLaunch(pace, now)) launched(pace, now);
          } else pushedBack(pace, policy, { sentAt: now - next.sentBeforeMs, now, hintMs: next.hintMs, ceiling });
          if (pace.perMinute !== null) {
            expect(pace.perMinute).toBeGreaterThanOrEqual(policy.floorPerMinute);
            if (ceiling !== null) expect(pace.perMinute).toBeLessThanOrEqual(Math.max(ceiling, policy.floorPerMinute));
            expect(claimAhead(pace)).toBeGreaterThanOrEqual(1);
          }
          // Whatever happened, a send may go within the longest pause plus one spacing at the floor.
          expect(pace.nextAt - now).toBeLessThanOrEqual(policy.maxPauseMs + 60_000 / policy.floorPerMinute);
        }
      }),
    );
  });

  it("follows another node's pushback (fleet mode): by its own rate, once per episode, and a pause only when it sent nothing", () => {
    const busy = freshPace(policy);
    const now = acceptedRun(busy, 40, 100);
    expect(heardPushback(busy, policy, { now, hintMs: null, ceiling: null })).toBe(true);
    expect(busy.perMinute).toBe(30); // 0.75 of the 40 it sent the relay
    // The other nodes told it too, within the second: the same episode, not counted again.
    expect(heardPushback(busy, policy, { now: now + 500, hintMs: null, ceiling: null })).toBe(false);
    expect(busy.perMinute).toBe(30);

    const idle = freshPace(policy);
    expect(heardPushback(idle, policy, { now, hintMs: 5000, ceiling: null })).toBe(true);
    expect(idle.perMinute).toBeNull(); // no rate of its own to lower: no floor pace that would starve it
    expect(mayLaunch(idle, now + 4999)).toBe(false); // the relay's hint, honoured
    expect(mayLaunch(idle, now + 5000)).toBe(true);
  });
});
