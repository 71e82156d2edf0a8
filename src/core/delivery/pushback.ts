/**
 * Whether a relay's refusal means "you are sending too fast" (pushback): the replies
 * an adaptive pace slows down for (relay-pace.ts), told apart from the transient
 * refusals that say nothing of our pace (a full mailbox, greylisting, a relay down).
 *
 * Pushback is a transient refusal (4yz) that either carries a security or policy
 * status of class 4 (4.7.x: Gmail's 4.7.28, Outlook's 4.7.500, "421 4.7.0 Try again
 * later") or words its reason as a rate, a volume or a count of connections the way the
 * providers document theirs (SES "Maximum sending rate exceeded", Yahoo's "unexpected
 * volume", "too many connections", "rate limited", "throttled"). Greylisting is a 4.7.1
 * too, and is not pushback: it ends by itself on the retry whatever our pace.
 */
import type { DeliveryDecision } from './delivery-outcome.js';

/** Codes a relay answers pushback with: service closing (421), mailbox or action unavailable now (450, 451, 452), 454 (SES). */
const PUSHBACK_CODES = new Set([421, 450, 451, 452, 454]);
const POLICY_STATUS = /^4\.7\.\d{1,3}$/;
const RATE_WORDS =
  /rate[ -]?limit|too many (?:messages|mails|e-?mails|connections|concurrent|sessions|recipients|requests)|throttl|(?:sending|message|send) rate|slow down|unexpected volume|exceeded .{0,40}(?:rate|quota|limit)|(?:rate|quota|limit) exceeded|server busy|temporarily (?:deferred|rate)/i;
const GREYLISTING = /gr[ae]y ?list/i;

/** Why a deferral is pushback, or null when it is not. */
export function pushbackOf(
  decision: Pick<Extract<DeliveryDecision, { kind: 'deferred' }>, 'replyCode' | 'enhancedStatus' | 'reason'>,
): 'policy_status' | 'rate_words' | null {
  if (GREYLISTING.test(decision.reason)) return null;
  if (RATE_WORDS.test(decision.reason)) return 'rate_words';
  const transient = decision.replyCode !== null && PUSHBACK_CODES.has(decision.replyCode);
  if (transient && decision.enhancedStatus !== null && POLICY_STATUS.test(decision.enhancedStatus))
    return 'policy_status';
  return null;
}

/** True when a send's decision is the relay pushing back (only a deferral can be). */
export const isPushback = (decision: DeliveryDecision): boolean =>
  decision.kind === 'deferred' && pushbackOf(decision) !== null;
