/**
 * "Why is this message still queued?", as data: everything that holds a
 * message back from its relay right now, most decisive first, and when each
 * stops holding it. Pure: the caller gathers the message, its tenant,
 * suspensions, account, usage and suppressions at one instant; each edge
 * words the reasons its own way.
 */
import type { Account } from '../account/account.js';
import type { MessageDetail } from './admin.js';
import { budgetReturnsAt, limitsOf, type Usage } from '../account/rate-limit.js';
import { shownPace } from '../delivery/relay-pace.js';

export type WaitingCode =
  | 'tenant_inactive'
  | 'tenant_suspended'
  | 'batch_suspended'
  | 'account_missing'
  | 'account_paused'
  | 'rate_limited'
  | 'relay_backoff'
  | 'destination_limited'
  | 'scheduled'
  | 'retry_backoff'
  | 'suppressed'
  | 'sending'
  | 'due';

/** The reasons that end by themselves, at a known instant. */
export type TimedWaitingCode = 'rate_limited' | 'scheduled' | 'retry_backoff';

/**
 * One thing that holds the message back, as data: the edges word it (the API's
 * `message`, the console's line) from the code, the message and what the reason
 * carries beyond the message's own fields.
 */
export type WaitingReason =
  /** `untilAt`: epoch ms when this stops holding the message by itself. */
  | { code: TimedWaitingCode; untilAt: number }
  | { code: 'account_paused'; untilAt: null; pausedReason: string | null }
  | { code: 'suppressed'; untilAt: null; recipients: string[] }
  /** The relay pushed back: the account sends at `perMinute` for now, its next send at `untilAt`. */
  | { code: 'relay_backoff'; untilAt: number; perMinute: number }
  /** Held for a destination of its recipients (per-destination limits) that has used its limit: it may go at `untilAt`. */
  | { code: 'destination_limited'; untilAt: number; destination: string }
  /** `poolSize`: the account's connections; null when the account is gone. */
  | { code: 'due'; untilAt: null; poolSize: number | null }
  /** These take an operator (or the relay's answer) to end. */
  | {
      code: Exclude<
        WaitingCode,
        TimedWaitingCode | 'account_paused' | 'suppressed' | 'due' | 'relay_backoff' | 'destination_limited'
      >;
      untilAt: null;
    };

export interface WaitingExplanation {
  /** False once the message is sent or failed: nothing holds it any more. */
  waiting: boolean;
  reasons: WaitingReason[];
  /** Epoch ms when the daemon gives up on it (dispatch.max_age_seconds after it was accepted). */
  expiresAt: number | null;
}

export interface WaitingInput {
  message: Pick<MessageDetail, 'state' | 'attempts' | 'createdAt' | 'nextAttemptAt' | 'batchCode'> &
    Partial<Pick<MessageDetail, 'heldFor'>>;
  tenantActive: boolean;
  /** The tenant's suspended batch codes, `*` for the whole tenant. */
  suspensions: readonly string[];
  account:
    | (Pick<
        Account,
        'pausedAt' | 'pausedReason' | 'limitPerMinute' | 'limitPerHour' | 'limitPerDay' | 'maxConnections'
      > &
        Partial<Pick<Account, 'warmUp'>>)
    | null;
  usage: Usage | null;
  /** The account's pace after its relay pushed back (adaptive backoff); null or absent when it is not paced. */
  pace?: { perMinute: number; nextAt: number } | null;
  /** The message's recipients that are on the tenant's suppression list now. */
  suppressed: readonly string[];
  maxAgeSeconds: number;
  /** Epoch ms. */
  now: number;
}

const wholeSecond = (at: number): number => Math.floor(at / 1000);

export function whyWaiting(input: WaitingInput): WaitingExplanation {
  const { message, account } = input;
  if (message.state === 'sent' || message.state === 'error') return { waiting: false, reasons: [], expiresAt: null };
  const reasons: WaitingReason[] = [];
  const add = (reason: WaitingReason): void => {
    reasons.push(reason);
  };

  if (message.state === 'sending') add({ code: 'sending', untilAt: null });
  if (!input.tenantActive) add({ code: 'tenant_inactive', untilAt: null });
  if (input.suspensions.includes('*')) add({ code: 'tenant_suspended', untilAt: null });
  if (message.batchCode !== null && input.suspensions.includes(message.batchCode))
    add({ code: 'batch_suspended', untilAt: null });
  if (account === null) {
    add({ code: 'account_missing', untilAt: null });
  } else {
    if (account.pausedAt !== null) add({ code: 'account_paused', untilAt: null, pausedReason: account.pausedReason });
    const limits = limitsOf(account, input.now);
    const returnsAt = input.usage === null ? null : budgetReturnsAt(limits, input.usage, input.now);
    // Rounded up to its whole second: the budget is not back before that second is over.
    if (returnsAt !== null) add({ code: 'rate_limited', untilAt: Math.ceil(returnsAt / 1000) * 1000 });
    const pace = input.pace ?? null;
    if (pace !== null)
      add({
        code: 'relay_backoff',
        untilAt: Math.ceil(Math.max(pace.nextAt, input.now) / 1000) * 1000,
        perMinute: shownPace(pace.perMinute),
      });
  }
  const next = message.nextAttemptAt;
  // Whole seconds, the grain the API shows: an attempt due within the current second is due now.
  const heldFor = message.heldFor ?? null;
  if (message.state !== 'sending' && next !== null && wholeSecond(next) > wholeSecond(input.now))
    add(
      heldFor !== null
        ? { code: 'destination_limited', untilAt: next, destination: heldFor }
        : { code: message.attempts === 0 ? 'scheduled' : 'retry_backoff', untilAt: next },
    );
  if (input.suppressed.length > 0) add({ code: 'suppressed', untilAt: null, recipients: [...input.suppressed] });
  if (reasons.length === 0)
    add({ code: 'due', untilAt: null, poolSize: account === null ? null : account.maxConnections });
  return { waiting: true, reasons, expiresAt: message.createdAt + input.maxAgeSeconds * 1000 };
}
