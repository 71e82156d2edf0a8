import { describe, expect, it } from 'vitest';
import { availableBudget, budgetReturnsAt, windowStart, type Limits, type Usage } from './rate-limit.js';

const AT = Date.UTC(2026, 6, 14, 10, 37, 25, 400);
const none: Limits = { minute: null, hour: null, day: null };
const used = (minute: number, hour: number, day: number): Usage => ({ minute, hour, day });

describe('rate-limit windows', () => {
  it('are fixed UTC windows: the minute, the hour and the day that contain the instant', () => {
    expect(windowStart('minute', AT)).toBe(Date.UTC(2026, 6, 14, 10, 37));
    expect(windowStart('hour', AT)).toBe(Date.UTC(2026, 6, 14, 10));
    expect(windowStart('day', AT)).toBe(Date.UTC(2026, 6, 14));
    expect(windowStart('minute', Date.UTC(2026, 6, 14, 10, 38))).toBe(Date.UTC(2026, 6, 14, 10, 38));
  });
});

describe('availableBudget', () => {
  it('is unlimited without limits, whatever was used', () => {
    expect(availableBudget(none, used(1000, 1000, 1000))).toBe(Number.POSITIVE_INFINITY);
  });

  it('is what the tightest window has left', () => {
    expect(availableBudget({ minute: 10, hour: 100, day: null }, used(4, 95, 500))).toBe(5);
    expect(availableBudget({ minute: 10, hour: 100, day: null }, used(7, 20, 500))).toBe(3);
  });

  it('is zero, never negative, when a window is over its limit (a limit lowered meanwhile)', () => {
    expect(availableBudget({ minute: null, hour: null, day: 50 }, used(0, 0, 80))).toBe(0);
  });
});

describe('budgetReturnsAt', () => {
  it('is null while every limited window has budget left', () => {
    expect(budgetReturnsAt({ minute: 10, hour: 100, day: null }, used(9, 99, 5000), AT)).toBeNull();
    expect(budgetReturnsAt(none, used(9, 99, 5000), AT)).toBeNull();
  });

  it('is the end of the exhausted window', () => {
    expect(budgetReturnsAt({ minute: 10, hour: null, day: null }, used(10, 10, 10), AT)).toBe(
      Date.UTC(2026, 6, 14, 10, 38),
    );
  });

  it('is the end of the latest one when several are exhausted: budget returns only when all of them have', () => {
    expect(budgetReturnsAt({ minute: 10, hour: 10, day: null }, used(10, 10, 10), AT)).toBe(Date.UTC(2026, 6, 14, 11));
    expect(budgetReturnsAt({ minute: 10, hour: 100, day: 10 }, used(10, 10, 10), AT)).toBe(Date.UTC(2026, 6, 15));
  });
});
