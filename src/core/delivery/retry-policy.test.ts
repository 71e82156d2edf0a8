import { describe, expect, it } from 'vitest';
import { budgetReturnsAt, availableBudget, windowStart } from '../account/rate-limit.js';
import { nextRetry } from './retry-policy.js';

const policy = { scheduleMs: [60_000, 300_000, 900_000], jitter: 0.2, maxAgeMs: 3_600_000 };

describe('retry policy', () => {
  it('follows the schedule, repeating its last step, with jitter inside the bound', () => {
    expect(nextRetry(policy, { attempts: 1, now: 0, createdAt: 0, hintMs: null, random: 0.5 })).toEqual({
      retry: true,
      at: 60_000,
    });
    expect(nextRetry(policy, { attempts: 2, now: 0, createdAt: 0, hintMs: null, random: 0.5 })).toEqual({
      retry: true,
      at: 300_000,
    });
    expect(nextRetry(policy, { attempts: 9, now: 0, createdAt: 0, hintMs: null, random: 0.5 })).toEqual({
      retry: true,
      at: 900_000,
    });
    expect(nextRetry(policy, { attempts: 1, now: 0, createdAt: 0, hintMs: null, random: 0 })).toEqual({
      retry: true,
      at: 48_000,
    });
    expect(nextRetry(policy, { attempts: 1, now: 0, createdAt: 0, hintMs: null, random: 0.999999 })).toMatchObject({
      at: 72_000,
    });
  });

  it("honours the relay's hint", () => {
    expect(nextRetry(policy, { attempts: 1, now: 1000, createdAt: 0, hintMs: 30_000, random: 0.9 })).toEqual({
      retry: true,
      at: 31_000,
    });
  });

  it('gives up past the maximum age', () => {
    const decision = nextRetry(policy, { attempts: 5, now: 3_000_000, createdAt: 0, hintMs: null, random: 0.5 });
    expect(decision).toMatchObject({ retry: false, reason: expect.stringContaining('after 5 attempts') });
  });
});

describe('rate-limit windows', () => {
  const limits = { minute: 5, hour: 100, day: null };
  it('gives the smallest remaining budget', () => {
    expect(availableBudget(limits, { minute: 2, hour: 99, day: 10_000 })).toBe(1);
    expect(availableBudget({ minute: null, hour: null, day: null }, { minute: 9, hour: 9, day: 9 })).toBe(Infinity);
  });

  it('says when an exhausted window reopens', () => {
    const now = windowStart('minute', 1_700_000_000_000) + 12_345;
    expect(budgetReturnsAt(limits, { minute: 5, hour: 5, day: 5 }, now)).toBe(windowStart('minute', now) + 60_000);
    expect(budgetReturnsAt(limits, { minute: 5, hour: 100, day: 5 }, now)).toBe(windowStart('hour', now) + 3_600_000);
    expect(budgetReturnsAt(limits, { minute: 4, hour: 5, day: 5 }, now)).toBeNull();
  });
});
