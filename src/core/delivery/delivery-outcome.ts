/**
 * What a relay's answer means for the message: one pure, table-driven decision.
 * The reply code decides first (RFC 5321 §4.2.1: 4yz transient, 5yz permanent),
 * the enhanced status refines it (RFC 3463), the transport's failure comes
 * second (refused, reset, timeout: transient; AUTH or TLS: the account's fault).
 */
import type { RecipientRefusal, RelayReply, RelayStage } from './relay.js';

export type DeliveryDecision =
  | { kind: 'sent'; replyCode: number; enhancedStatus: string | null; text: string; refused: RecipientRefusal[] }
  | {
      kind: 'deferred';
      reason: string;
      replyCode: number | null;
      enhancedStatus: string | null;
      retryAfterMs: number | null;
    }
  | {
      kind: 'failed';
      reason: string;
      replyCode: number | null;
      enhancedStatus: string | null;
      refused: RecipientRefusal[];
    }
  /** The account cannot send at all (bad credentials, TLS): pause it, keep the message. */
  | { kind: 'account_problem'; reason: string; stage: RelayStage; replyCode: number | null };

type Failure = Extract<RelayReply, { ok: false }>;
type Verdict = 'deferred' | 'failed' | 'account_problem';

interface Rule {
  name: string;
  when(failure: Failure): boolean;
  verdict: Verdict;
}

const classOf = (status: string | null): string | null => status?.split('.')[0] ?? null;
const mentionsAuth = (text: string): boolean => /auth/i.test(text);

/** First matching rule wins; order matters. */
export const FAILURE_RULES: readonly Rule[] = [
  { name: 'auth stage', when: (f) => f.stage === 'auth', verdict: 'account_problem' },
  { name: 'tls stage', when: (f) => f.stage === 'tls', verdict: 'account_problem' },
  // 530 5.7.0 "Authentication required", 535 5.7.8: the relay wants credentials we do not have right.
  {
    name: 'auth required',
    when: (f) => f.replyCode === 530 || f.replyCode === 535 || (f.enhancedStatus === '5.7.0' && mentionsAuth(f.text)),
    verdict: 'account_problem',
  },
  // An enhanced status of class 4 is transient whatever the basic code says, and vice versa.
  { name: 'enhanced transient', when: (f) => classOf(f.enhancedStatus) === '4', verdict: 'deferred' },
  {
    name: 'enhanced permanent',
    when: (f) => classOf(f.enhancedStatus) === '5' && f.replyCode !== null && f.replyCode >= 500,
    verdict: 'failed',
  },
  { name: '4yz', when: (f) => f.replyCode !== null && f.replyCode >= 400 && f.replyCode < 500, verdict: 'deferred' },
  { name: '5yz', when: (f) => f.replyCode !== null && f.replyCode >= 500, verdict: 'failed' },
  // No reply code: the conversation broke (refused, reset, timeout, protocol error).
  { name: 'transport failure', when: () => true, verdict: 'deferred' },
];

const RETRY_HINT =
  /(?:try again|retry|retry-after)\D{0,20}?(\d{1,6})\s*(s|sec|secs|seconds?|m|min|mins|minutes?|h|hours?)?\b/i;
const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000 };

/** "try again in 30 seconds", "Retry-After: 120", "retry in 5 minutes" -> milliseconds. */
export function parseRetryHint(text: string): number | null {
  const match = RETRY_HINT.exec(text);
  if (match === null) return null;
  const amount = Number(match[1]);
  const unit = (match[2] ?? 's').toLowerCase()[0] ?? 's';
  return amount * (UNIT_MS[unit] ?? 1000);
}

/** A relay failure in a line: its reply code and enhanced status, then its words (or its stage when it said none). */
export function describe(failure: Failure): string {
  const code = [failure.replyCode, failure.enhancedStatus].filter((part) => part !== null).join(' ');
  const text = failure.text.trim() || failure.errorCode || failure.stage;
  return code === ''
    ? `${failure.stage}: ${text}`
    : text.startsWith(String(failure.replyCode))
      ? text
      : `${code} ${text}`;
}

/** The account steps a relay's reply is read against: a relay answering STARTTLS with "500 command not recognized" says nothing about TLS by itself. */
const ACCOUNT_STEPS: Partial<Record<RelayStage, string>> = { tls: 'TLS', auth: 'AUTH' };

/** A paused account's reason names the step that failed; a failure without a reply is already told by its stage (describe). */
function pauseReason(failure: Failure): string {
  const step = ACCOUNT_STEPS[failure.stage];
  const replied = failure.replyCode !== null || failure.enhancedStatus !== null;
  return step === undefined || !replied ? describe(failure) : `${step}: ${describe(failure)}`;
}

export function decideDelivery(reply: RelayReply): DeliveryDecision {
  if (reply.ok) {
    return {
      kind: 'sent',
      replyCode: reply.replyCode,
      enhancedStatus: reply.enhancedStatus,
      text: reply.text,
      refused: reply.refused,
    };
  }
  const rule = FAILURE_RULES.find((candidate) => candidate.when(reply)) ?? FAILURE_RULES[FAILURE_RULES.length - 1];
  const reason = describe(reply);
  switch (rule?.verdict) {
    case 'account_problem':
      return { kind: 'account_problem', reason: pauseReason(reply), stage: reply.stage, replyCode: reply.replyCode };
    case 'failed':
      return {
        kind: 'failed',
        reason,
        replyCode: reply.replyCode,
        enhancedStatus: reply.enhancedStatus,
        refused: reply.refused,
      };
    default:
      return {
        kind: 'deferred',
        reason,
        replyCode: reply.replyCode,
        enhancedStatus: reply.enhancedStatus,
        retryAfterMs: parseRetryHint(reply.text),
      };
  }
}
