/**
 * Failover between relays: whose relay sends an account's mail now. Its own, unless it is
 * paused (its relay refused our AUTH or TLS), unreachable (no answer for its
 * `failoverAfterSeconds`), or over its limits with `limitBehavior` failover; then the first of
 * its fallback accounts that is none of those, of the same kind (PEC or not). With none, a
 * paused account's mail waits (null) and the others' keeps to its own relay (to be retried, or
 * to wait for its window). Pure: what is unreachable or over its limits is asked of `relays`.
 */
import type { Account } from '../account/account.js';

/** The failovers this process holds, read by the edges (as AccountPaces for paces). */
export interface AccountFailovers {
  of(tenantId: string, accountId: string): AccountFailover | null;
  all(): AccountFailover[];
}

export type FailoverCause = 'paused' | 'unreachable' | 'over_limit';

/** An account whose mail goes through a fallback's relay now, as `/status` shows it. */
export interface AccountFailover {
  tenantId: string;
  accountId: string;
  via: string;
  cause: FailoverCause;
  since: number;
}

export interface RelayConditions {
  unreachable(account: Account): boolean;
  overLimit(account: Account): boolean;
}

/** Why `account` cannot send its own mail now, or null when it can. */
export function failoverCause(account: Account, relays: RelayConditions): FailoverCause | null {
  if (account.pausedAt !== null) return 'paused';
  if (relays.unreachable(account)) return 'unreachable';
  if (account.limitBehavior === 'failover' && relays.overLimit(account)) return 'over_limit';
  return null;
}

/**
 * The account whose relay sends `account`'s mail now (null: none may, it waits), and why not its
 * own when it cannot send. `fallbacks`: its fallback accounts that exist, in order.
 */
export function relayFor(
  account: Account,
  fallbacks: readonly Account[],
  relays: RelayConditions,
): { relay: Account | null; cause: FailoverCause | null } {
  const cause = failoverCause(account, relays);
  if (cause === null) return { relay: account, cause };
  const standIn = fallbacks.find(
    (fallback) =>
      fallback.id !== account.id &&
      fallback.isPec === account.isPec &&
      fallback.pausedAt === null &&
      !relays.unreachable(fallback) &&
      !relays.overLimit(fallback),
  );
  if (standIn !== undefined) return { relay: standIn, cause };
  return { relay: cause === 'paused' ? null : account, cause };
}
