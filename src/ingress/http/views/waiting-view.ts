/**
 * "Why is it still queued?" in words: the core's waiting reasons (codes and
 * instants) as the API answers them, each with its sentence and epoch seconds.
 * The console words them the same way.
 */
import { epochSeconds } from '../../../core/clock.js';
import type { MessageDetail } from '../../../core/message-admin.js';
import type { WaitingCode, WaitingExplanation, WaitingReason } from '../../../core/waiting-reasons.js';

export interface WaitingReasonView {
  code: WaitingCode;
  message: string;
  until_ts: number | null;
}

export interface WaitingView {
  waiting: boolean;
  reasons: WaitingReasonView[];
  expires_ts: number | null;
}

/** The message fields a reason's sentence names. */
export type WaitingSubject = Pick<MessageDetail, 'batchCode' | 'accountId' | 'attempts' | 'deferredReason' | 'lastReplyCode'>;

// The sentences name the instant to the second, as `until_ts` does.
const iso = (at: number): string => new Date(Math.floor(at / 1000) * 1000).toISOString();

/** The reason in words, for people: the code is what clients match on. */
export function waitingSentence(reason: WaitingReason, message: WaitingSubject): string {
  switch (reason.code) {
    case 'sending':
      return 'handed to the relay; the outcome is not recorded yet';
    case 'tenant_inactive':
      return 'the tenant is inactive: nothing of it is sent until it is activated';
    case 'tenant_suspended':
      return 'the whole tenant is suspended (POST /commands/activate)';
    case 'batch_suspended':
      return `its batch "${message.batchCode ?? ''}" is suspended (POST /commands/activate)`;
    case 'account_missing':
      return `its account "${message.accountId}" does not exist any more`;
    case 'account_paused':
      return `its account "${message.accountId}" is paused: ${reason.pausedReason ?? 'no reason given'} (saving the account resumes it)`;
    case 'rate_limited':
      return `its account has used its sending limit for now; budget returns at ${iso(reason.untilAt)}`;
    case 'scheduled':
      return `deferred by the client until ${iso(reason.untilAt)}`;
    case 'retry_backoff': {
      const last = message.deferredReason ?? (message.lastReplyCode === null ? 'no reply' : `reply ${message.lastReplyCode}`);
      return `attempt ${message.attempts} was refused for now (${last}); next attempt at ${iso(reason.untilAt)}`;
    }
    case 'suppressed':
      return `on the tenant's suppression list since it was accepted: ${reason.recipients.join(', ')}`;
    case 'due':
      return `due now: waiting for a free connection of account "${message.accountId}"${reason.poolSize === null ? '' : ` (pool of ${reason.poolSize})`}`;
  }
}

export function viewWaiting(why: WaitingExplanation, message: WaitingSubject): WaitingView {
  return {
    waiting: why.waiting,
    reasons: why.reasons.map((reason) => ({ code: reason.code, message: waitingSentence(reason, message), until_ts: epochSeconds(reason.untilAt) })),
    expires_ts: epochSeconds(why.expiresAt),
  };
}
