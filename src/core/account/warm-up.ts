/**
 * An account's warm-up: a new sending IP or domain earns the receivers' trust by volume
 * rising day by day, so an account may carry a schedule of daily caps from a start date
 * (UTC days: day 0 is the start date). Applied like its limit per day (the lower of the
 * two holds); once the schedule is over only its own limits remain. Pure.
 */

export interface WarmUp {
  /** The first day of the schedule, `YYYY-MM-DD` (UTC). */
  startDate: string;
  /** The cap of each day from the start date, in order. */
  dailyCaps: number[];
}

const DAY_MS = 86_400_000;

/** The longest schedule an account may carry, in days. */
export const MAX_WARM_UP_DAYS = 365;

/** The day of the schedule `now` falls in (0: the start date, and any day before it), or null once it is over. */
export function warmUpDay(warmUp: WarmUp | null, now: number): number | null {
  if (warmUp === null) return null;
  const day = Math.max(0, Math.floor((now - Date.parse(`${warmUp.startDate}T00:00:00Z`)) / DAY_MS));
  return day < warmUp.dailyCaps.length ? day : null;
}

/** Today's cap of the schedule, or null when there is none (no schedule, or it is over). */
export function warmUpCap(warmUp: WarmUp | null, now: number): number | null {
  const day = warmUpDay(warmUp, now);
  return day === null ? null : (warmUp?.dailyCaps[day] ?? null);
}

/** A warming account as `/status` shows it: the day of its schedule, today's cap and what it sent today. */
export interface WarmUpStatus {
  tenantId: string;
  accountId: string;
  /** 0: the start date. */
  day: number;
  days: number;
  capToday: number;
  sentToday: number;
}

/** The accounts warming up now, with today's usage (`sentToday`: what its day window counted). */
export function warmingUp(
  accounts: ReadonlyArray<{ tenantId: string; id: string; warmUp: WarmUp | null }>,
  sentToday: (tenantId: string, accountId: string) => number,
  now: number,
): WarmUpStatus[] {
  return accounts.flatMap((account) => {
    const day = warmUpDay(account.warmUp, now);
    if (day === null || account.warmUp === null) return [];
    return [
      {
        tenantId: account.tenantId,
        accountId: account.id,
        day,
        days: account.warmUp.dailyCaps.length,
        capToday: account.warmUp.dailyCaps[day] ?? 0,
        sentToday: sentToday(account.tenantId, account.id),
      },
    ];
  });
}
