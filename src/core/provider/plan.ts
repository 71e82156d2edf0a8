/**
 * What one provider event (core/provider/events.ts) means for our messages:
 * which message it is about, its provider state, the bounce or complaint to
 * record (the same records, reports and suppressions as the bounce mailbox's),
 * and which recipient to suppress. Pure: the webhook service looks candidates
 * up and the store writes the plan in one transaction.
 */
import { normalizeAddress } from '../address.js';
import type { BounceRecord, ComplaintRecord, MessageCandidate, SuppressionRecord } from '../bounce/bounce.js';
import type { BouncePolicy } from '../bounce/plan.js';
import { findReplyCode, findStatus, reasonOf } from '../bounce/classify.js';
import { correlateReferences, type Correlated } from '../bounce/correlation.js';
import {
  ONE_CLICK,
  PROVIDER_STATE_RANKS,
  providerStateOf,
  type ProviderEvent,
  type ProviderEventKind,
  type ProviderState,
} from './events.js';

export type ProviderMatchedBy = 'mail_id' | 'provider_message_id' | 'message_id';

/** The strongest reference first: our X-Genro-Mail-ID echoed back, then the provider's id from its 250 reply, then the Message-ID. */
export function correlateProviderEvent(
  event: ProviderEvent,
  lookup: (by: ProviderMatchedBy, value: string) => readonly MessageCandidate[],
): Correlated<ProviderMatchedBy> {
  return correlateReferences<ProviderMatchedBy>(
    [
      ['mail_id', event.mailId],
      ['provider_message_id', event.providerMessageId],
      ['message_id', event.messageIdHeader],
    ],
    lookup,
    [event.recipient],
  );
}

/** The provider event as the message's timeline records it (`message.<type>`). */
export const PROVIDER_TIMELINE: Readonly<Record<ProviderEventKind, string>> = {
  accepted: 'provider_accepted',
  delivered: 'delivered',
  bounced: 'bounced',
  dropped: 'dropped',
  complaint: 'complained',
  unsubscribed: 'unsubscribed',
};

export interface ProviderPlan {
  candidate: MessageCandidate;
  by: ProviderMatchedBy;
  /** The message's provider state after the event: applied only if its rank is not below the stored one's; null: unchanged. */
  state: { state: ProviderState; rank: number; at: number } | null;
  /** A bounced event: recorded as the bounce mailbox records one (fields, event, report). */
  bounce: BounceRecord | null;
  complaint: ComplaintRecord | null;
  suppression: SuppressionRecord | null;
  /** The timeline event of an accepted, delivered or dropped event (bounces and complaints have theirs). */
  event: { type: string; text: string | null; data: Record<string, unknown> } | null;
}

/** A provider's words as the message keeps them: enough to read, bounded. */
const MAX_REASON_LENGTH = 500;
const bounded = (text: string | null): string | null =>
  text === null ? null : text.length > MAX_REASON_LENGTH ? `${text.slice(0, MAX_REASON_LENGTH - 1)}…` : text;

/**
 * The recipient the event is about: the named one when we sent to it, else the message's only one,
 * else as named; `ours` when it is one we sent to (only those are suppressed: a provider naming a
 * forwarded address must not suppress an address the tenant never wrote to).
 */
function recipientOf(named: string | null, candidate: MessageCandidate): { address: string | null; ours: boolean } {
  const ours = candidate.rcptTo.map(normalizeAddress);
  if (named !== null && ours.includes(normalizeAddress(named))) return { address: normalizeAddress(named), ours: true };
  if (ours.length === 1) return { address: ours[0] ?? null, ours: true };
  return { address: named === null ? null : normalizeAddress(named), ours: false };
}

type Suppress = (source: 'bounce' | 'complaint' | 'unsubscribe', reason: string) => SuppressionRecord | null;

/** The suppression of the event's recipient, when it is one we sent to (recipientOf). */
function suppressionOf(
  candidate: MessageCandidate,
  { address, ours }: { address: string | null; ours: boolean },
  policy: BouncePolicy,
  now: number,
): Suppress {
  const expiresAt = policy.suppressionTtlMs === null ? null : now + policy.suppressionTtlMs;
  return (source, reason) =>
    address === null || !ours
      ? null
      : {
          tenantId: candidate.tenantId,
          address,
          reason,
          source,
          createdAt: now,
          // The recipient's own wish lasts until an operator removes it; the policy's lifetime is for bounces.
          expiresAt: source === 'unsubscribe' ? null : expiresAt,
        };
}

/**
 * An unsubscribe: our own link's suppression is the unsubscribe service's (shared with the fleet
 * like an operator's); a provider's link (SendGrid's, Mailgun's) is suppressed here, as its
 * complaints are.
 */
function planUnsubscribe(
  plan: ProviderPlan,
  event: ProviderEvent,
  recipient: string | null,
  source: Record<string, unknown>,
  suppress: Suppress,
): ProviderPlan {
  const ours = event.provider === ONE_CLICK;
  plan.event = {
    type: PROVIDER_TIMELINE.unsubscribed,
    text: ours
      ? 'the recipient unsubscribed by its one-click link'
      : `the recipient unsubscribed by ${event.provider}'s link`,
    data: { recipient, list: event.list ?? null, ...source },
  };
  if (!ours) plan.suppression = suppress('unsubscribe', `unsubscribed via ${event.provider}`);
  return plan;
}

export function planProviderEvent(
  event: ProviderEvent,
  candidate: MessageCandidate,
  by: ProviderMatchedBy,
  policy: BouncePolicy,
  now: number,
): ProviderPlan {
  const named = recipientOf(event.recipient, candidate);
  const recipient = named.address;
  const suppress = suppressionOf(candidate, named, policy, now);
  const reason = bounded(event.reason);
  // The provider's status may be an enhanced status (5.1.1), a reply code (550), or only inside its words.
  const enhancedStatus = findStatus(event.status ?? '') ?? findStatus(event.reason ?? '');
  const replyCode = findReplyCode(event.status ?? '') ?? findReplyCode(event.reason ?? '');
  const source =
    event.provider === ONE_CLICK
      ? { source: ONE_CLICK }
      : { source: 'webhook', provider: event.provider, provider_event_id: event.eventId, matched_by: by };
  const state = providerStateOf(event);
  const plan: ProviderPlan = {
    candidate,
    by,
    state: state === null ? null : { state, rank: PROVIDER_STATE_RANKS[state], at: event.at },
    bounce: null,
    complaint: null,
    suppression: null,
    event: null,
  };
  switch (event.kind) {
    case 'bounced': {
      const type = event.bounceType ?? 'hard';
      const category = reasonOf(enhancedStatus, event.reason ?? '') ?? 'other';
      plan.bounce = {
        tenantId: candidate.tenantId,
        clientId: candidate.id,
        type,
        code: replyCode ?? enhancedStatus,
        reason,
        recipient,
        at: event.at,
        details: { enhanced_status: enhancedStatus, reply_code: replyCode, category, ...source },
      };
      if (type === 'hard' && policy.suppressHardBounces)
        plan.suppression = suppress('bounce', `${enhancedStatus ?? replyCode ?? 'hard bounce'} ${category}`.trim());
      return plan;
    }
    case 'complaint':
      plan.complaint = {
        tenantId: candidate.tenantId,
        clientId: candidate.id,
        feedbackType: event.feedbackType,
        recipient,
        at: event.at,
        details: source,
      };
      if (policy.suppressComplaints)
        plan.suppression = suppress('complaint', `complaint: ${event.feedbackType ?? 'abuse'}`);
      return plan;
    case 'unsubscribed':
      return planUnsubscribe(plan, event, recipient, source, suppress);
    default:
      plan.event = {
        type: PROVIDER_TIMELINE[event.kind],
        text: reason ?? `${event.provider}: ${event.kind}`,
        data: { recipient, enhanced_status: enhancedStatus, reply_code: replyCode, reason, ...source },
      };
      return plan;
  }
}
