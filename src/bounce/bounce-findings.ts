/**
 * The bounce parser's verdict on one mailbox message in core terms, bounded in
 * time: a message it cannot understand in time is `unreadable`.
 */
import type { BounceFindings } from '../core/bounce/index.js';
import { parseWithin } from '../mailbox/index.js';
import type { BounceAnalysis } from './bounce-parser.js';

/**
 * Verdicts kept of one message: a real DSN names a handful of recipients; one
 * naming thousands would otherwise become thousands of events and report items.
 */
export const MAX_VERDICTS = 100;

export function toFindings(analysis: BounceAnalysis): BounceFindings {
  return {
    kind: analysis.kind,
    recipients: analysis.recipients.slice(0, MAX_VERDICTS).map((verdict) => ({
      recipient: verdict.recipient,
      alternates: verdict.alternates,
      action: verdict.action,
      bounceType: verdict.bounceType,
      enhancedStatus: verdict.status,
      replyCode: verdict.replyCode,
      reason: verdict.reason,
      diagnostic: verdict.diagnostic,
    })),
    mailId: analysis.mailId,
    originalMessageId: analysis.originalMessageId,
    originalEnvelopeId: analysis.originalEnvelopeId,
    feedbackType: analysis.feedbackType,
    verpMessagePk: null,
  };
}

export const UNREADABLE: BounceFindings = {
  kind: 'unreadable',
  recipients: [],
  mailId: null,
  originalMessageId: null,
  originalEnvelopeId: null,
  feedbackType: null,
  verpMessagePk: null,
};

/** The parser's findings, or `unreadable` when it throws or takes longer than `timeoutMs`. */
export async function readFindings(
  raw: Buffer,
  timeoutMs: number,
  analyse: (raw: Buffer) => Promise<BounceAnalysis>,
): Promise<{ findings: BounceFindings; problem: string | null }> {
  const read = await parseWithin(() => analyse(raw), timeoutMs);
  return read.problem === null
    ? { findings: toFindings(read.value), problem: null }
    : { findings: UNREADABLE, problem: read.problem };
}
