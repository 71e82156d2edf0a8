/**
 * "Why is it still queued?" in words: the core's waiting reasons (codes and
 * instants) as the API answers them, each with its sentence and epoch seconds.
 * The console words them the same way.
 */
import { epochSeconds } from '../../../core/index.js';
import {
  type WaitingCode,
  type WaitingExplanation,
  waitingSentence,
  type WaitingSubject,
} from '../../../core/message/index.js';

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

export function viewWaiting(why: WaitingExplanation, message: WaitingSubject): WaitingView {
  return {
    waiting: why.waiting,
    reasons: why.reasons.map((reason) => ({
      code: reason.code,
      message: waitingSentence(reason, message),
      until_ts: epochSeconds(reason.untilAt),
    })),
    expires_ts: epochSeconds(why.expiresAt),
  };
}
