import type { Account } from './account.js';
import { warmUpCap, type WarmUp } from './warm-up.js';

/**
 * Per-account sending limits over fixed UTC windows (minute, hour, day). Usage
 * is counted when a message is claimed, so a crash cannot hand out budget twice.
 */

export type WindowKind = 'minute' | 'hour' | 'day';
export const WINDOW_MS: Record<WindowKind, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 };
export const WINDOW_KINDS: readonly WindowKind[] = ['minute', 'hour', 'day'];

/**
 * The reason of a message refused by its account's limit (limit_behavior "reject"): the
 * `error` its client is told, and what the metrics count it by. Spelt here only.
 */
export const RATE_LIMIT_EXCEEDED = 'rate_limit_exceeded';

export type Limits = Record<WindowKind, number | null>;

/** The account's limits at `now`: its own, with the day's limit lowered to its warm-up cap while it warms up. */
export function limitsOf(
  account: Pick<Account, 'limitPerMinute' | 'limitPerHour' | 'limitPerDay'> & { warmUp?: WarmUp | null },
  now: number,
): Limits {
  const cap = warmUpCap(account.warmUp ?? null, now);
  const day = account.limitPerDay;
  return {
    minute: account.limitPerMinute,
    hour: account.limitPerHour,
    day: cap === null ? day : day === null ? cap : Math.min(day, cap),
  };
}

/** Messages counted in the window that contains `now`, per kind. */
export type Usage = Record<WindowKind, number>;

export function windowStart(kind: WindowKind, now: number): number {
  return Math.floor(now / WINDOW_MS[kind]) * WINDOW_MS[kind];
}

/** How many messages may be claimed now (Infinity without limits). */
export function availableBudget(limits: Limits, usage: Usage): number {
  let budget = Number.POSITIVE_INFINITY;
  for (const kind of WINDOW_KINDS) {
    const limit = limits[kind];
    if (limit !== null) budget = Math.min(budget, Math.max(0, limit - usage[kind]));
  }
  return budget;
}

/** When budget returns: the end of the latest exhausted window; null when not exhausted. */
export function budgetReturnsAt(limits: Limits, usage: Usage, now: number): number | null {
  let at: number | null = null;
  for (const kind of WINDOW_KINDS) {
    const limit = limits[kind];
    if (limit !== null && usage[kind] >= limit) {
      const end = windowStart(kind, now) + WINDOW_MS[kind];
      at = at === null ? end : Math.max(at, end);
    }
  }
  return at;
}
