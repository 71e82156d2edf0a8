/**
 * The vocabulary of bounce reasons, and how their phrase tables are written.
 * Pure; the tables themselves are in the *-phrases.ts files.
 */

/** One pattern from alternatives written one per line: the same as their sources joined by `|`. */
export function anyOf(alternatives: readonly RegExp[], flags: string): RegExp {
  return new RegExp(alternatives.map((alternative) => alternative.source).join('|'), flags);
}

/** Reasons by wording, tried in order: the first pattern that matches names the reason. */
export type ReasonTable = ReadonlyArray<readonly [BounceReason, RegExp]>;

export type BounceReason =
  | 'user_unknown'
  | 'mailbox_full'
  | 'host_unknown'
  | 'account_disabled'
  | 'spam_block'
  | 'policy_block'
  | 'message_too_large'
  | 'expired'
  | 'rate_limited'
  | 'system_error';
