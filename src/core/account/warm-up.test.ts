import { describe, expect, it } from 'vitest';
import { limitsOf } from './rate-limit.js';
import { warmingUp, warmUpCap, warmUpDay, type WarmUp } from './warm-up.js';

const warmUp: WarmUp = { startDate: '2026-12-01', dailyCaps: [50, 100, 200] };
const at = (iso: string): number => Date.parse(iso);

describe('warm-up', () => {
  it('caps each UTC day from the start date by its place in the schedule, and nothing once it is over', () => {
    expect(warmUpCap(warmUp, at('2026-11-30T12:00:00Z'))).toBe(50); // before the start: its first day's cap
    expect(warmUpCap(warmUp, at('2026-12-01T00:00:00Z'))).toBe(50);
    expect(warmUpCap(warmUp, at('2026-12-01T23:59:59.999Z'))).toBe(50);
    expect(warmUpCap(warmUp, at('2026-12-02T00:00:00Z'))).toBe(100);
    expect(warmUpDay(warmUp, at('2026-12-03T08:00:00Z'))).toBe(2);
    expect(warmUpCap(warmUp, at('2026-12-04T00:00:00Z'))).toBeNull();
    expect(warmUpCap(null, at('2026-12-01T00:00:00Z'))).toBeNull();
  });

  it("is applied like the day's limit: the lower of the two holds", () => {
    const account = { limitPerMinute: 10, limitPerHour: null, limitPerDay: 80, warmUp };
    expect(limitsOf(account, at('2026-12-01T10:00:00Z'))).toEqual({ minute: 10, hour: null, day: 50 });
    expect(limitsOf(account, at('2026-12-02T10:00:00Z'))).toEqual({ minute: 10, hour: null, day: 80 });
    expect(limitsOf({ ...account, limitPerDay: null }, at('2026-12-03T10:00:00Z')).day).toBe(200);
    expect(limitsOf({ ...account, limitPerDay: null }, at('2026-12-04T10:00:00Z')).day).toBeNull();
  });

  it('lists the accounts warming up now with their day, cap and what they sent today', () => {
    const accounts = [
      { tenantId: 'acme', id: 'new', warmUp },
      { tenantId: 'acme', id: 'old', warmUp: null },
      { tenantId: 'acme', id: 'done', warmUp: { startDate: '2026-01-01', dailyCaps: [1] } },
    ];
    expect(warmingUp(accounts, () => 7, at('2026-12-02T10:00:00Z'))).toEqual([
      { tenantId: 'acme', accountId: 'new', day: 1, days: 3, capToday: 100, sentToday: 7 },
    ]);
  });
});
