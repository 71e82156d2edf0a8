/**
 * What a bounce's wording and reason say about the future of a failed
 * delivery (hard or soft), when its codes do not. Data only, for
 * core/bounce/classify.ts; every pattern bounded.
 */
import { anyOf, type BounceReason } from './reason.js';

/**
 * What the wording says about the future of a failed delivery, when neither an
 * enhanced status nor a reply code does: a warning that the message is still
 * queued is soft, a notice that delivery was abandoned is hard. Tried in order.
 */
export const PERMANENCE_PHRASES: ReadonlyArray<readonly ['hard' | 'soft', RegExp]> = [
  [
    'soft',
    anyOf(
      [
        /warning message only/,
        /do not need to re-?send/,
        /you do not need to resend/,
        /will (be )?(retried|retry|try again|continue)/,
        /delivery attempts will continue/,
        /still (being )?(retried|trying|queued)/,
        /temporary failure report/,
        /has been delayed/,
        /is delayed/,
        /delivery (has been )?delayed/,
        /delay(ed)? (notification|warning)/,
        /not yet (been )?delivered/,
        /kept in the queue/,
      ],
      'i',
    ),
  ],
  [
    'hard',
    anyOf(
      [
        /permanent(ly)? (error|failure|fatal|failed)/,
        /failed permanently/,
        /fatal errors?/,
        /no further (delivery )?attempts/,
        /giving up/,
        /gave up/,
        /could not be delivered/,
        /undeliverable/,
        /deleted from (the )?queue/,
        /delivery failed/,
        /not delivered/,
        /returning message to sender/,
        /returned mail/,
      ],
      'i',
    ),
  ],
];

/**
 * An MTA's own words for giving up after its retry period (Exim's reason under the
 * address; its text around says "permanent error"): the message came back, but the
 * address may be good, so the bounce is soft. Another MTA's "delivery retry timeout"
 * after a refusal is not one of these.
 */
export const EXPIRY_PHRASES: RegExp = anyOf(
  [
    // The domain holds no "@" (so a run of "a@a@..." is scanned once, not once per "@"), then the reason under it.
    /@[^\s@]{1,255}\s{1,20}retry timeout exceeded/,
    /all hosts(?: for '[^']{1,255}')? have been failing for a long time/,
    /retry time not reached for any host after a long failure period/,
  ],
  'i',
);

/** Without a status, a code or any wording of permanence, what the reason alone says. */
export const SOFT_REASONS: ReadonlySet<BounceReason> = new Set(['expired', 'rate_limited']);
export const HARD_REASONS: ReadonlySet<BounceReason> = new Set([
  'user_unknown',
  'host_unknown',
  'account_disabled',
  'policy_block',
  'spam_block',
  'message_too_large',
]);
