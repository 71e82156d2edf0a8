/**
 * An account as GET /accounts and GET /account/{id} answer it: the account's contract
 * (core/contracts/account.ts, the same object its events carry) and, when the daemon
 * tells it, what the account is doing, in the API's snake_case and epoch seconds.
 */
import { type AccountActivity, type AccountState, WINDOW_KINDS, type WindowKind } from '../../../core/account/index.js';
import { epochSeconds } from '../../../core/index.js';
import { viewAccount, type AccountView } from '../../../core/contracts/index.js';
import { viewFailover, viewPace } from './relay-route-view.js';

/** Per limit window: messages sent in it, the limit (null: none) and when it starts again (epoch seconds). */
export type WindowUsageView = Record<WindowKind, { used: number; limit: number | null; resets_ts: number }>;

/** The account's relay connections now; `max` is its max_connections. */
export interface ConnectionsView {
  open: number;
  in_use: number;
  max: number;
}

/** The last failed attempt (kept after a later success: compare `at_ts` with last_success_ts). */
export interface LastErrorView {
  text: string;
  reply_code: number | null;
  at_ts: number;
}

export type AccountActivityView = AccountView & {
  usage?: WindowUsageView | undefined;
  waiting?: number | undefined;
  connections?: ConnectionsView | undefined;
  last_error?: LastErrorView | null | undefined;
  last_success_ts?: number | null | undefined;
  pace?: { per_minute: number; next_ts: number; since_ts: number; pushbacks: number } | null | undefined;
  failover?:
    { via_account_id: string; cause: 'paused' | 'unreachable' | 'over_limit'; since_ts: number } | null | undefined;
};

export function viewAccountState({ account, activity }: AccountState): AccountActivityView {
  return activity === null ? viewAccount(account) : { ...viewAccount(account), ...viewActivity(activity) };
}

// Field order as the API has always answered: usage, waiting, connections, last_error, last_success_ts.
function viewActivity(activity: AccountActivity): Omit<AccountActivityView, keyof AccountView> {
  const usage = Object.fromEntries(
    WINDOW_KINDS.map((kind) => {
      const window = activity.usage[kind];
      return [kind, { used: window.used, limit: window.limit, resets_ts: Math.floor(window.resetsAt / 1000) }];
    }),
  ) as WindowUsageView;
  const { connections, attempts } = activity;
  const error = attempts?.lastError ?? null;
  return {
    usage,
    waiting: activity.waiting,
    connections: { open: connections.open, in_use: connections.inUse, max: connections.max },
    ...(attempts === undefined
      ? {}
      : {
          last_error:
            error === null
              ? null
              : { text: error.text, reply_code: error.replyCode, at_ts: epochSeconds(error.at) ?? 0 },
          last_success_ts: epochSeconds(attempts.lastSuccessAt),
        }),
    ...(activity.pace === undefined ? {} : { pace: activity.pace === null ? null : viewPace(activity.pace) }),
    ...(activity.failover === undefined
      ? {}
      : { failover: activity.failover === null ? null : viewFailover(activity.failover) }),
  };
}
