/**
 * The wording tables behind core/bounce/classify.ts, in the order they are
 * tried: what a bounce's words say about why it failed. The phrases are kept
 * by concern in *-phrases.ts; this file orders them. Data only; every
 * pattern is bounded (no nested or unbounded repetition before a literal) so
 * that a hostile diagnostic cannot make it backtrack.
 */
import {
  ACCOUNT_DISABLED_WORDS,
  GROUP_POSTING_REFUSALS,
  MAILBOX_FULL_WORDS,
  MESSAGE_TOO_LARGE_WORDS,
  USER_UNKNOWN_WORDS,
} from './mailbox-phrases.js';
import { anyOf, type ReasonTable } from './reason.js';
import {
  AUTH_CHECK_TROUBLE_WORDS,
  CONTENT_RULE_WORDS,
  SENDER_RULE_WORDS,
  SENDING_HOST_WORDS,
  SPAM_NAMED_WORDS,
} from './refusal-phrases.js';
import { EXPIRED_WORDS, HOST_UNKNOWN_WORDS, RATE_LIMITED_WORDS, SYSTEM_TROUBLE_WORDS } from './transport-phrases.js';

export type { BounceReason } from './reason.js';
export { GROUP_POSTING_REFUSALS } from './mailbox-phrases.js';
export { REASON_OVERRIDES } from './reason-overrides.js';
export { EXPIRY_PHRASES, HARD_REASONS, PERMANENCE_PHRASES, SOFT_REASONS } from './permanence.js';

/**
 * Phrases in a diagnostic, in the order they are tried: the first match names
 * the reason. Specific wordings come before generic ones ("denied", "rejected",
 * "unavailable"), which only say that the server refused.
 */
export const REASON_PHRASES: ReasonTable = [
  // A list that takes no post from this sender is the list's rule (its own refusal may also say the group "may not exist").
  ...GROUP_POSTING_REFUSALS.map(([, pattern]) => ['policy_block', pattern] as const),
  ['mailbox_full', MAILBOX_FULL_WORDS],
  ['message_too_large', MESSAGE_TOO_LARGE_WORDS],
  ['account_disabled', ACCOUNT_DISABLED_WORDS],
  // What the server's rules refused, named precisely, and spam named outright, in this order:
  // a list or content rule first (a refusal may add "to reduce spam"), explicit spam words, then sender
  // authentication and relaying (a spam refusal may add "set up SPF"), then the wording of IP blocks.
  ['policy_block', CONTENT_RULE_WORDS],
  ['spam_block', SPAM_NAMED_WORDS],
  ['system_error', AUTH_CHECK_TROUBLE_WORDS],
  ['policy_block', SENDER_RULE_WORDS],
  ['spam_block', SENDING_HOST_WORDS],
  ['user_unknown', USER_UNKNOWN_WORDS],
  ['system_error', SYSTEM_TROUBLE_WORDS],
  ['host_unknown', HOST_UNKNOWN_WORDS],
  ['rate_limited', RATE_LIMITED_WORDS],
  ['expired', EXPIRED_WORDS],
];

/**
 * Vague words ("denied", "unavailable", "try again"): tried only when no text about the
 * recipient names a reason precisely, so a relay's generic summary does not hide a
 * precise reason given elsewhere.
 */
export const GENERIC_REASON_PHRASES: ReasonTable = [
  [
    'policy_block',
    anyOf(
      [
        /not allowed/,
        /unrout(e)?able sender/,
        /polic(y|ies)/,
        /not permitted/,
        /message rejected/,
        /rejected (by|due|for|because)/,
        /access denied/,
        /filtered/,
        /denied/,
        /refused/,
        /prohibited/,
        /banned/,
        /restricted/,
        /not accepted/,
        /rejected/,
        /header (error|syntax)/,
        /blacklisted/,
        /content (rejected|filter|not accepted)/,
      ],
      'i',
    ),
  ],
  [
    'system_error',
    anyOf(
      [
        /system error/,
        /no route to host/,
        /temporary (failure|error|problem)/,
        /connection (refused|reset|timed? out|lost|closed)/,
        /network/,
        /mail system (is )?full/,
        /server error/,
        /loop(s)? (back|detected)/,
        /routing loop/,
        /mail(er)? loop/,
        /too many hops/,
        /resources temporarily/,
        /unavailable/,
        /try again/,
        /syntax/,
        /transaction failed/,
        /command (parameter )?not (implemented|recognized)/,
        /service not available/,
        /socket error/,
        /unknown mailer/,
        /protocol error/,
        /no such file/,
      ],
      'i',
    ),
  ],
];

/**
 * Wording that outranks even a definite status: the recipient's own filter
 * refused the sender, whatever status the server chose to send with it
 * ("550 5.1.1 Refused due to recipient preferences"; Facebook documents it as
 * "The attempted recipient's preferences prevent messages from being delivered").
 */
export const DECISIVE_PHRASES: ReasonTable = [
  [
    'policy_block',
    /recipient'?s? preferences|refuses? to (receive|accept) (mail|messages?|e-?mails?) from|blocked by the recipient|recipient has blocked/i,
  ],
];
