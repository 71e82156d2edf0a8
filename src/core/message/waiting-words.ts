/**
 * A waiting reason in words, for people: the sentence the API's `message`, the console's line and
 * the fleet's node-to-node wire all carry. One wording, so that a reason reads the same whichever
 * node or edge shows it; the code is what clients match on.
 */
import type { MessageDetail } from './admin.js';
import type { WaitingReason } from './waiting-reasons.js';

/** The message fields a reason's sentence names. */
export type WaitingSubject = Pick<
  MessageDetail,
  'batchCode' | 'accountId' | 'attempts' | 'deferredReason' | 'lastReplyCode'
>;

// The sentences name the instant to the second, as the API's `until_ts` does.
const iso = (at: number): string => new Date(Math.floor(at / 1000) * 1000).toISOString();

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
      return `its account "${message.accountId}" is paused: ${reason.pausedReason ?? NO_PAUSE_REASON} (saving the account resumes it)`;
    case 'rate_limited':
      return `its account has used its sending limit for now; budget returns at ${iso(reason.untilAt)}`;
    case 'relay_backoff':
      return `its account's relay pushed back ("too fast"): account "${message.accountId}" sends ${reason.perMinute} a minute for now, the next at ${iso(reason.untilAt)}`;
    case 'destination_limited':
      return `held for its recipients' destination "${reason.destination}", which has used its limit through account "${message.accountId}" for now; it may go at ${iso(reason.untilAt)}`;
    case 'scheduled':
      return `deferred by the client until ${iso(reason.untilAt)}`;
    case 'retry_backoff': {
      const last =
        message.deferredReason ?? (message.lastReplyCode === null ? 'no reply' : `reply ${message.lastReplyCode}`);
      return `attempt ${message.attempts} was refused for now (${last}); next attempt at ${iso(reason.untilAt)}`;
    }
    case 'suppressed':
      return `on the tenant's suppression list since it was accepted: ${reason.recipients.join(', ')}`;
    case 'due':
      return `due now: waiting for a free connection of account "${message.accountId}"${reason.poolSize === null ? '' : ` (pool of ${reason.poolSize})`}`;
  }
}

/** What an account_paused sentence says when the account was paused without a reason. */
export const NO_PAUSE_REASON = 'no reason given';
