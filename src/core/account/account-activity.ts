/** What an account is doing (window usage, waiting messages, relay connections, last attempts), beside the account read. */
import type { Account } from './account.js';
import type { AccountAttempts } from './attempt-log.js';
import type { Clock } from '../clock.js';
import type { QueueCount } from '../message/queue-status.js';
import type { AccountFailover } from '../delivery/failover.js';
import type { RelayConnections } from '../delivery/relay.js';
import type { AccountPace } from '../delivery/relay-pace.js';
import { limitsOf, WINDOW_KINDS, WINDOW_MS, windowStart, type Usage, type WindowKind } from './rate-limit.js';

/** Where the daemon tells what its accounts are doing. */
export interface AccountActivitySource {
  usage(tenantId: string, accountId: string, now: number): Usage;
  waiting(tenantId: string | null): Array<Pick<QueueCount, 'tenantId' | 'accountId' | 'count'>>;
  /** The relay pools' connections (relay threads are asked). */
  connections?(): Promise<RelayConnections[]>;
  /** Each account's last attempts, kept in memory by the delivery side since the start. */
  attempts?(tenantId: string, accountId: string): AccountAttempts;
  /** Its pace while its relay pushed back (adaptive backoff), null when it is not paced. */
  pace?(tenantId: string, accountId: string): AccountPace | null;
  /** The fallback whose relay sends its mail now (failover), null when its own does. */
  failover?(tenantId: string, accountId: string): AccountFailover | null;
}

/** Per limit window: messages sent in it, the limit (null: none) and when the next window starts. */
export type WindowUsage = Record<WindowKind, { used: number; limit: number | null; resetsAt: number }>;

/** What an account is doing now, as far as the daemon tells (AccountServiceDeps.activity). */
export interface AccountActivity {
  usage: WindowUsage;
  waiting: number;
  /** The account's relay connections now; `max` is its max_connections. */
  connections: { open: number; inUse: number; max: number };
  /** Absent when the delivery side keeps no attempt log. */
  attempts?: AccountAttempts;
  /** Null when not paced; absent when the delivery side does not tell. */
  pace?: AccountPace | null;
  /** Null when its own relay sends its mail; absent when the delivery side does not tell. */
  failover?: AccountFailover | null;
}

/**
 * An account read for people: the account itself (its secrets still in it: an edge
 * shows it through a view that redacts them) and its activity, null when not told.
 */
export interface AccountState {
  account: Account;
  activity: AccountActivity | null;
}

/** Each account with its window usage, waiting messages, connections and last attempts when the daemon tells them. */
export function accountActivityReader(
  activity: AccountActivitySource | undefined,
  clock: Clock,
): (accounts: Account[], tenantId: string | null) => Promise<AccountState[]> {
  return async (accounts: Account[], tenantId: string | null): Promise<AccountState[]> => {
    if (activity === undefined) return accounts.map((account) => ({ account, activity: null }));
    const pools = new Map(
      ((await activity.connections?.()) ?? []).map((pool) => [`${pool.tenantId}/${pool.accountId}`, pool]),
    );
    const now = clock.now();
    const waiting = new Map<string, number>();
    for (const row of activity.waiting(tenantId)) {
      const key = `${row.tenantId}/${row.accountId}`;
      waiting.set(key, (waiting.get(key) ?? 0) + row.count);
    }
    return accounts.map((account) => {
      const used = activity.usage(account.tenantId, account.id, now);
      // The day's limit is the warm-up's cap while the account warms up.
      const limits: Record<WindowKind, number | null> = limitsOf(account, now);
      const usage = Object.fromEntries(
        WINDOW_KINDS.map((kind) => [
          kind,
          {
            used: used[kind],
            limit: limits[kind],
            resetsAt: windowStart(kind, now) + WINDOW_MS[kind],
          },
        ]),
      ) as WindowUsage;
      const key = `${account.tenantId}/${account.id}`;
      const pool = pools.get(key);
      const attempts = activity.attempts?.(account.tenantId, account.id);
      const pace = activity.pace?.(account.tenantId, account.id);
      const failover = activity.failover?.(account.tenantId, account.id);
      return {
        account,
        activity: {
          usage,
          waiting: waiting.get(key) ?? 0,
          connections: { open: pool?.open ?? 0, inUse: pool?.inUse ?? 0, max: account.maxConnections },
          ...(attempts === undefined ? {} : { attempts }),
          ...(pace === undefined ? {} : { pace }),
          ...(failover === undefined ? {} : { failover }),
        },
      };
    });
  };
}
