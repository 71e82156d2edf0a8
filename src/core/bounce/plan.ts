/**
 * What one message of the bounce mailbox means for our messages: which sent
 * message it is about (correlation), the bounce or complaint to record, and
 * which recipients to suppress. Pure: the poller looks candidates up and the
 * store writes the plan.
 */
import { normalizeAddress, splitAddress } from '../address.js';
import { correlateReferences, type Correlated } from './correlation.js';
import type {
  BounceDisposition,
  BounceFindings,
  BouncePlan,
  BounceRecord,
  ComplaintRecord,
  MatchedBy,
  MessageCandidate,
  RecipientFinding,
  SuppressionRecord,
} from './bounce.js';

export interface BouncePolicy {
  /** A hard bounce puts its recipient on the tenant's suppression list. */
  suppressHardBounces: boolean;
  /** A complaint puts its recipient on the tenant's suppression list. */
  suppressComplaints: boolean;
  /** How long a suppression from a bounce or complaint lasts; null for until removed. */
  suppressionTtlMs: number | null;
}

/** Kinds that are about a message we sent; the others are filed as `not_bounce`. */
const ABOUT_A_MESSAGE = new Set(['bounce', 'delayed', 'complaint']);
/** A bounce's diagnostic as the message keeps it: enough to read, bounded. */
const MAX_REASON_LENGTH = 500;

export type Correlation = Correlated<MatchedBy>;

/**
 * The strongest reference first: X-Genro-Mail-ID, then Message-ID, then the
 * VERP address the bounce came back to. The same
 * client id may exist in several tenants; the bounced recipients then pick
 * the one message that was sent to them, or the bounce stays unmatched.
 */
export function correlate(
  findings: BounceFindings,
  lookup: (by: MatchedBy, value: string) => readonly MessageCandidate[],
): Correlation {
  return correlateReferences<MatchedBy>(
    [
      ['mail_id', findings.mailId],
      ['message_id', findings.originalMessageId],
      ['verp', findings.verpMessagePk === null ? null : String(findings.verpMessagePk)],
    ],
    lookup,
    findings.recipients.flatMap((finding) => [finding.recipient, ...(finding.alternates ?? [])]),
  );
}

/**
 * The address of ours a finding is about, and never one we did not send to:
 * the named recipient when it is in the message's envelope, else the first of
 * the bounce's other addresses for it that is (a DSN may name the mailbox a
 * forward or an alias reached, and keep ours in Original-Recipient or the
 * returned original), else the message's only recipient, else the one
 * recipient of ours the named mailbox is a host-qualified form of
 * (`ann@mx1.example.net` for `ann@example.net`). Else none: a bounce for a
 * mailbox we did not send to suppresses nobody.
 */
function ourRecipient(finding: RecipientFinding | undefined, candidate: MessageCandidate): string | null {
  const ours = candidate.rcptTo.map(normalizeAddress);
  const named = [finding?.recipient ?? null, ...(finding?.alternates ?? [])].flatMap((address) =>
    address === null ? [] : [normalizeAddress(address)],
  );
  const sentTo = named.find((address) => ours.includes(address));
  if (sentTo !== undefined) return sentTo;
  if (ours.length === 1) return ours[0] ?? null;
  const qualified = ours.filter((address) => named.some((other) => isHostQualifiedFormOf(other, address)));
  return qualified.length === 1 ? (qualified[0] ?? null) : null;
}

/** `ann@mx1.example.net` is `ann@example.net` written with the host that holds the mailbox. */
function isHostQualifiedFormOf(named: string, ours: string): boolean {
  const [namedLocal, namedDomain] = splitAddress(named);
  const [ourLocal, ourDomain] = splitAddress(ours);
  return namedLocal === ourLocal && namedDomain.endsWith(`.${ourDomain}`);
}

const bounded = (text: string | null): string | null =>
  text === null ? null : text.length > MAX_REASON_LENGTH ? `${text.slice(0, MAX_REASON_LENGTH - 1)}…` : text;

/** A failed recipient without a verdict is hard (the DSN said "failed"); a delayed one is always soft. */
const typeOf = (finding: RecipientFinding): 'hard' | 'soft' =>
  finding.action === 'delayed' ? 'soft' : (finding.bounceType ?? 'hard');

export function planBounce(
  findings: BounceFindings,
  correlation: Correlation,
  policy: BouncePolicy,
  now: number,
): BouncePlan {
  const empty = { bounces: [], complaints: [], suppressions: [] };
  if (!ABOUT_A_MESSAGE.has(findings.kind)) {
    // Unreadable mail is kept for a human (`unmatched`), not dismissed as ordinary mail.
    const disposition: BounceDisposition = findings.kind === 'unreadable' ? 'unmatched' : 'not_bounce';
    return { disposition, unmatchedReason: null, match: null, ...empty };
  }
  if (!correlation.matched)
    return { disposition: 'unmatched', unmatchedReason: correlation.reason, match: null, ...empty };
  const plan: BouncePlan = {
    disposition: 'processed',
    unmatchedReason: null,
    match: { candidate: correlation.candidate, by: correlation.by },
    ...empty,
  };
  const matched = { ...correlation, policy, now };
  return findings.kind === 'complaint' ? planComplaint(findings, matched, plan) : planBounces(findings, matched, plan);
}

/** A matched message, with what the plan needs to record about it. */
interface Matched {
  candidate: Extract<Correlation, { matched: true }>['candidate'];
  by: Extract<Correlation, { matched: true }>['by'];
  policy: BouncePolicy;
  now: number;
}

/** The suppression of `address` that a bounce or a complaint asks for (none without an address). */
function suppression(
  matched: Matched,
  address: string | null,
  source: 'bounce' | 'complaint',
  reason: string | null,
): SuppressionRecord[] {
  const { candidate, policy, now } = matched;
  const expiresAt = policy.suppressionTtlMs === null ? null : now + policy.suppressionTtlMs;
  return address === null ? [] : [{ tenantId: candidate.tenantId, address, reason, source, createdAt: now, expiresAt }];
}

function planComplaint(findings: BounceFindings, matched: Matched, plan: BouncePlan): BouncePlan {
  const { candidate, by, policy, now } = matched;
  const recipient = ourRecipient(findings.recipients[0], candidate);
  const complaint: ComplaintRecord = {
    tenantId: candidate.tenantId,
    clientId: candidate.id,
    feedbackType: findings.feedbackType,
    recipient,
    at: now,
    details: { matched_by: by },
  };
  plan.complaints.push(complaint);
  if (policy.suppressComplaints)
    plan.suppressions.push(
      ...suppression(matched, recipient, 'complaint', `complaint: ${findings.feedbackType ?? 'abuse'}`),
    );
  return plan;
}

/** A DSN that names nobody still tells of the message: one verdict without a recipient. */
const nobodyNamed = (findings: BounceFindings): RecipientFinding => ({
  recipient: null,
  action: findings.kind === 'delayed' ? 'delayed' : 'failed',
  bounceType: null,
  enhancedStatus: null,
  replyCode: null,
  reason: null,
  diagnostic: null,
});

function planBounces(findings: BounceFindings, matched: Matched, plan: BouncePlan): BouncePlan {
  const { candidate, by, policy, now } = matched;
  const seen = new Set<string>();
  for (const finding of findings.recipients.length > 0 ? findings.recipients : [nobodyNamed(findings)]) {
    const recipient = ourRecipient(finding, candidate);
    if (seen.has(recipient ?? '')) continue;
    seen.add(recipient ?? '');
    const type = typeOf(finding);
    const bounce: BounceRecord = {
      tenantId: candidate.tenantId,
      clientId: candidate.id,
      type,
      code: finding.replyCode ?? finding.enhancedStatus,
      reason: bounded(finding.diagnostic ?? finding.reason),
      recipient,
      at: now,
      details: {
        enhanced_status: finding.enhancedStatus,
        reply_code: finding.replyCode,
        category: finding.reason ?? 'other',
        action: finding.action,
        matched_by: by,
      },
    };
    plan.bounces.push(bounce);
    if (type === 'hard' && policy.suppressHardBounces) {
      const reason = `${finding.enhancedStatus ?? finding.replyCode ?? 'hard bounce'} ${finding.reason ?? ''}`.trim();
      plan.suppressions.push(...suppression(matched, recipient, 'bounce', reason));
    }
  }
  return plan;
}
