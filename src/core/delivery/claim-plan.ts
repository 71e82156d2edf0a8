/**
 * What the dispatcher claims for one account in one step: how many messages,
 * up to which priority, and whether they end in error for want of budget.
 * Pure: the lane's fill, the account's limits and usage come in as numbers.
 */
import type { Account } from '../account/account.js';
import { availableBudget, budgetReturnsAt, limitsOf, type Limits, type Usage } from '../account/rate-limit.js';

export interface ClaimInput {
  account: Pick<Account, 'limitPerMinute' | 'limitPerHour' | 'limitPerDay' | 'limitBehavior'> &
    Partial<Pick<Account, 'warmUp'>>;
  /** How many messages the account's lane may hold, claimed or sending. */
  window: number;
  /** How many it holds now. */
  held: number;
  /** The most one claim (one transaction) takes. */
  claimBatch: number;
  /** Counted in the windows that contain `now`; zeros when the account has no limits. */
  usage: Usage;
  now: number;
  /**
   * The relay pushed back and the account is paced (its window is what the pace sends in a few
   * seconds): no claim beyond it, not even of priority 0, which waits queued (and says why) rather
   * than claimed; the next claim takes it first.
   */
  paced?: boolean;
}

export type ClaimPlan =
  /** Over its limit with `limit_behavior = defer`: nothing until budget returns (null: not exhausted). */
  | { kind: 'wait_for_budget'; budgetReturnsAt: number | null }
  /** No room in the lane: a finishing send wakes the dispatcher. */
  | { kind: 'none' }
  /** `reject`: over its limit with `limit_behavior = reject`, what is claimed ends in error. */
  | { kind: 'claim'; limit: number; maxPriority: 0 | 3; reject: boolean };

export { limitsOf };

/** Usage is read only for an account with a limit. */
export const isLimited = (limits: Limits): boolean =>
  limits.minute !== null || limits.hour !== null || limits.day !== null;

export function planClaim(input: ClaimInput): ClaimPlan {
  const { window, held, claimBatch } = input;
  const limits = limitsOf(input.account, input.now);
  // Refill in batches (a claim is a transaction), except that priority 0 never waits for one.
  const maxPriority = held === 0 || window - held >= window / 2 ? 3 : 0;
  const budget = availableBudget(limits, input.usage);
  const overLimit = budget === 0;
  // `failover` with no fallback that may send (the dispatcher chose the account's own relay): it waits too.
  if (overLimit && input.account.limitBehavior !== 'reject')
    return { kind: 'wait_for_budget', budgetReturnsAt: budgetReturnsAt(limits, input.usage, input.now) };
  // Priority 0 is claimed even into a full lane: it overtakes what waits there (unless paced).
  const room = maxPriority === 0 && input.paced !== true ? claimBatch : Math.max(0, window - held);
  const limit = Math.min(room, claimBatch, overLimit ? window : budget);
  return limit === 0 ? { kind: 'none' } : { kind: 'claim', limit, maxPriority, reject: overLimit };
}

/**
 * Whether the account's next due message sets a wake instant after a claim:
 * not when the claim took its limit (more may wait now: a step follows at once)
 * nor when it was priority 0 only (a finishing send wakes the dispatcher).
 * Claimed less than asked: the rest is not due yet.
 */
export const needsDueWake = (plan: Extract<ClaimPlan, { kind: 'claim' }>, claimed: number): boolean =>
  !(claimed === plan.limit && !plan.reject) && plan.maxPriority === 3;
