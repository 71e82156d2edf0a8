/**
 * "Why is this message still queued?", in words and data: everything that
 * holds a message back from its relay right now, most decisive first, and
 * when each stops holding it. Pure: the caller gathers the message, its
 * tenant, suspensions, account, usage and suppressions at one instant.
 */
import type { Account } from './account.js';
import type { MessageDetail } from './message-admin.js';
import { budgetReturnsAt, type Usage } from './rate-limit.js';

export type WaitingCode =
  | 'tenant_inactive'
  | 'tenant_suspended'
  | 'batch_suspended'
  | 'account_missing'
  | 'account_paused'
  | 'rate_limited'
  | 'scheduled'
  | 'retry_backoff'
  | 'suppressed'
  | 'sending'
  | 'due';

export interface WaitingReason {
  code: WaitingCode;
  message: string;
  /** Epoch seconds when this stops holding the message by itself; null when it takes an operator. */
  until_ts: number | null;
}

export interface WaitingExplanation {
  /** False once the message is sent or failed: nothing holds it any more. */
  waiting: boolean;
  reasons: WaitingReason[];
  /** When the daemon gives up on it (dispatch.max_age_seconds after it was accepted). */
  expires_ts: number | null;
}

export interface WaitingInput {
  message: Pick<MessageDetail, 'state' | 'attempts' | 'created_ts' | 'next_attempt_ts' | 'batch_code' | 'deferred_reason' | 'last_reply_code' | 'account_id'>;
  tenantActive: boolean;
  /** The tenant's suspended batch codes, `*` for the whole tenant. */
  suspensions: readonly string[];
  account: Pick<Account, 'pausedAt' | 'pausedReason' | 'limitPerMinute' | 'limitPerHour' | 'limitPerDay' | 'maxConnections'> | null;
  usage: Usage | null;
  /** The message's recipients that are on the tenant's suppression list now. */
  suppressed: readonly string[];
  maxAgeSeconds: number;
  /** Epoch ms. */
  now: number;
}

const iso = (seconds: number): string => new Date(seconds * 1000).toISOString();

export function whyWaiting(input: WaitingInput): WaitingExplanation {
  const { message, account } = input;
  if (message.state === 'sent' || message.state === 'error') return { waiting: false, reasons: [], expires_ts: null };
  const nowSeconds = Math.floor(input.now / 1000);
  const reasons: WaitingReason[] = [];
  const add = (code: WaitingCode, text: string, until: number | null = null): void => {
    reasons.push({ code, message: text, until_ts: until });
  };

  if (message.state === 'sending') add('sending', 'handed to the relay; the outcome is not recorded yet');
  if (!input.tenantActive) add('tenant_inactive', 'the tenant is inactive: nothing of it is sent until it is activated');
  if (input.suspensions.includes('*')) add('tenant_suspended', 'the whole tenant is suspended (POST /commands/activate)');
  if (message.batch_code !== null && input.suspensions.includes(message.batch_code))
    add('batch_suspended', `its batch "${message.batch_code}" is suspended (POST /commands/activate)`);
  if (account === null) {
    add('account_missing', `its account "${message.account_id}" does not exist any more`);
  } else {
    if (account.pausedAt !== null)
      add('account_paused', `its account "${message.account_id}" is paused: ${account.pausedReason ?? 'no reason given'} (saving the account resumes it)`);
    const limits = { minute: account.limitPerMinute, hour: account.limitPerHour, day: account.limitPerDay };
    const returnsAt = input.usage === null ? null : budgetReturnsAt(limits, input.usage, input.now);
    if (returnsAt !== null)
      add('rate_limited', `its account has used its sending limit for now; budget returns at ${iso(Math.ceil(returnsAt / 1000))}`, Math.ceil(returnsAt / 1000));
  }
  const next = message.next_attempt_ts;
  if (message.state !== 'sending' && next !== null && next > nowSeconds) {
    if (message.attempts === 0) add('scheduled', `deferred by the client until ${iso(next)}`, next);
    else {
      const last = message.deferred_reason ?? (message.last_reply_code === null ? 'no reply' : `reply ${message.last_reply_code}`);
      add('retry_backoff', `attempt ${message.attempts} was refused for now (${last}); next attempt at ${iso(next)}`, next);
    }
  }
  if (input.suppressed.length > 0) add('suppressed', `on the tenant's suppression list since it was accepted: ${input.suppressed.join(', ')}`);
  if (reasons.length === 0) {
    const pool = account === null ? '' : ` (pool of ${account.maxConnections})`;
    add('due', `due now: waiting for a free connection of account "${message.account_id}"${pool}`);
  }
  return { waiting: true, reasons, expires_ts: message.created_ts + input.maxAgeSeconds };
}
