/**
 * The parser's verdict as `mailproxy bounce parse` prints it (the output
 * contract of the bounce issue): `kind` says how it was read (`dsn`,
 * `heuristic`, `arf`, `autoreply`, `none`), `category` what it is (`bounce`,
 * `delayed`, `complaint`, `auto_reply`, `delivered`, `not_bounce`); the first
 * bounced recipient's fields at the top, every recipient's verdict in `recipients`.
 */
import type { BounceAnalysis, RecipientVerdict } from './bounce-parser.js';

export interface ParseReport {
  is_bounce: boolean;
  kind: BounceAnalysis['method'];
  category: BounceAnalysis['kind'];
  bounce_type: 'hard' | 'soft' | null;
  smtp_code: string | null;
  enhanced_status: string | null;
  recipient: string | null;
  reason: string | null;
  /** What the reporting MTA said about that recipient (Diagnostic-Code, or the prose near it). */
  diagnostic: string | null;
  original_message_id: string | null;
  mail_id: string | null;
  feedback_type: string | null;
  recipients: RecipientVerdict[];
}

export function parseReportOf(analysis: BounceAnalysis): ParseReport {
  const first = analysis.recipients[0];
  const isBounce = analysis.kind === 'bounce' || analysis.kind === 'delayed';
  return {
    is_bounce: isBounce,
    kind: analysis.method,
    category: analysis.kind,
    bounce_type: isBounce ? (first?.bounceType ?? null) : null,
    smtp_code: isBounce ? (first?.replyCode ?? null) : null,
    enhanced_status: isBounce ? (first?.status ?? null) : null,
    recipient: isBounce ? (first?.recipient ?? null) : null,
    reason: isBounce ? (first?.reason ?? null) : null,
    diagnostic: isBounce ? (first?.diagnostic ?? null) : null,
    original_message_id: analysis.originalMessageId,
    mail_id: analysis.mailId,
    feedback_type: analysis.feedbackType,
    recipients: analysis.recipients,
  };
}
