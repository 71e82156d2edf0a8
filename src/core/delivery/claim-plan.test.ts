import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { needsDueWake, planClaim, type ClaimInput } from './claim-plan.js';

const NO_LIMITS = { limitPerMinute: null, limitPerHour: null, limitPerDay: null, limitBehavior: 'defer' as const };
const input = (over: Partial<ClaimInput> = {}): ClaimInput => ({
  account: NO_LIMITS,
  window: 20,
  held: 0,
  claimBatch: 100,
  usage: { minute: 0, hour: 0, day: 0 },
  now: 1_000_000,
  ...over,
});

describe('planClaim', () => {
  it('fills an empty lane up to its window at every priority', () => {
    expect(planClaim(input())).toEqual({ kind: 'claim', limit: 20, maxPriority: 3, reject: false });
  });

  it('refills a lane at most half full with all priorities, up to the room left', () => {
    expect(planClaim(input({ held: 10 }))).toEqual({ kind: 'claim', limit: 10, maxPriority: 3, reject: false });
  });

  it('claims only priority 0 into a lane more than half full, even a full one, up to a claim batch', () => {
    expect(planClaim(input({ held: 11 }))).toEqual({ kind: 'claim', limit: 100, maxPriority: 0, reject: false });
    expect(planClaim(input({ held: 20, claimBatch: 50 }))).toEqual({
      kind: 'claim',
      limit: 50,
      maxPriority: 0,
      reject: false,
    });
  });

  it('claims nothing beyond a paced lane, not even priority 0: it waits queued for the pace', () => {
    expect(planClaim(input({ window: 2, held: 2, paced: true }))).toEqual({ kind: 'none' });
    expect(planClaim(input({ window: 3, held: 2, paced: true }))).toEqual({
      kind: 'claim',
      limit: 1,
      maxPriority: 0,
      reject: false,
    });
    expect(planClaim(input({ window: 2, held: 0, paced: true }))).toEqual({
      kind: 'claim',
      limit: 2,
      maxPriority: 3,
      reject: false,
    });
  });

  it('claims no more than the budget left in the tightest window', () => {
    const account = { ...NO_LIMITS, limitPerMinute: 5, limitPerHour: 100 };
    expect(planClaim(input({ account, usage: { minute: 3, hour: 3, day: 3 } }))).toMatchObject({
      kind: 'claim',
      limit: 2,
    });
  });

  it('waits until the exhausted window ends when the account defers', () => {
    const account = { ...NO_LIMITS, limitPerMinute: 5 };
    expect(planClaim(input({ account, now: 60_000 * 10 + 5000, usage: { minute: 5, hour: 5, day: 5 } }))).toEqual({
      kind: 'wait_for_budget',
      budgetReturnsAt: 60_000 * 11,
    });
  });

  it('claims a window of messages to end in error when the account rejects over its limit', () => {
    const account = { ...NO_LIMITS, limitPerMinute: 5, limitBehavior: 'reject' as const };
    expect(planClaim(input({ account, usage: { minute: 5, hour: 5, day: 5 } }))).toEqual({
      kind: 'claim',
      limit: 20,
      maxPriority: 3,
      reject: true,
    });
  });

  it('claims nothing when a claim batch is zero', () => {
    expect(planClaim(input({ claimBatch: 0 }))).toEqual({ kind: 'none' });
  });
});

describe('needsDueWake', () => {
  const plan = { kind: 'claim' as const, limit: 20, maxPriority: 3 as const, reject: false };
  it('looks for the next due message only when the claim took less than asked', () => {
    expect(needsDueWake(plan, 7)).toBe(true);
    expect(needsDueWake(plan, 20)).toBe(false);
  });
  it('does not after a priority 0 claim (a finishing send wakes), but does after a rejecting claim that took its limit', () => {
    expect(needsDueWake({ ...plan, maxPriority: 0 }, 3)).toBe(false);
    expect(needsDueWake({ ...plan, reject: true }, 20)).toBe(true);
  });

  it('never plans a claim above any limit, and never holds back an account whose limits and lane allow one (property)', () => {
    const limit = fc.option(fc.integer({ min: 1, max: 50 }), { nil: null });
    fc.assert(
      fc.property(
        fc.record({ minute: limit, hour: limit, day: limit }),
        fc.record({
          minute: fc.integer({ min: 0, max: 60 }),
          hour: fc.integer({ min: 0, max: 60 }),
          day: fc.integer({ min: 0, max: 60 }),
        }),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 0, max: 40 }),
        fc.constantFrom('defer' as const, 'reject' as const),
        (limits, usage, window, heldRaw, behavior) => {
          const held = Math.min(heldRaw, window);
          const account = {
            limitPerMinute: limits.minute,
            limitPerHour: limits.hour,
            limitPerDay: limits.day,
            limitBehavior: behavior,
          };
          const plan = planClaim(input({ account, usage, window, held }));
          const left = Math.min(
            ...(['minute', 'hour', 'day'] as const).map((kind) =>
              limits[kind] === null ? Infinity : Math.max(0, limits[kind] - usage[kind]),
            ),
          );
          if (plan.kind === 'claim' && !plan.reject) expect(plan.limit).toBeLessThanOrEqual(left);
          // Budget and room in the lane: something is claimed.
          if (left > 0 && held < window) expect(plan).toMatchObject({ kind: 'claim', reject: false });
          // No budget: it waits (defer) or what it claims ends in error (reject), never sent.
          if (left === 0) expect(plan.kind === 'wait_for_budget' || (plan.kind === 'claim' && plan.reject)).toBe(true);
        },
      ),
    );
  });
});
