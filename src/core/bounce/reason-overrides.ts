/**
 * Corrections to a reason read from the wording, from the SMTP phase of the
 * refusal and the class of its status. Data only, for core/bounce/classify.ts.
 */
import type { BounceReason } from './reason.js';
import { NETWORK_TROUBLE_WORDS, QUEUE_GAVE_UP_WORDS } from './transport-phrases.js';

/**
 * Corrections to a reason the wording gave, from what else is known of the
 * refusal: its SMTP phase (RFC 5321 §3.3) and the class of its status.
 * - A server that refuses a recipient only after it has read the message (end
 *   of DATA) refused the content, whatever its reply says ("550 User unknown"
 *   is what some filters answer): the address is not known to be dead. Unless
 *   the server then says it had no recipient ("503 Need RCPT", "no valid
 *   recipients"): a pipelining
 *   client reads the RCPT refusal after sending DATA.
 * - A refusal of MAIL FROM is about the sender, not the recipient.
 * - A recipient refused at RCPT TO with nothing but a vague word ("Recipient
 *   address rejected.", "Access denied") is an address the server does not
 *   take: a refusal on other grounds says which.
 * - A network trouble (a refused or timed-out connection, a name server that
 *   failed for now) is the last attempt's error, and the delivery expired,
 *   when the queue says it gave up on the message (X.4.7, "retry timeout
 *   exceeded", "could not be delivered for 5 days"). A connection that timed
 *   out in a report that says the delivery failed (RFC 3464 §2.3.3) with a
 *   transient status (4.x.x, RFC 3463 §2) is a host that never answered until
 *   the queue's lifetime ran out (Postfix's maximal_queue_lifetime returns the
 *   message with the last deferral's reason and status): an expiry too. A
 *   refused or dropped connection is the host's own answer: a network trouble.
 * - A transient (4.x.x) name-server failure is a network trouble, unless the
 *   domain itself says it takes no mail (null MX, RFC 7505).
 * - "Unrouteable address" in a remote server's permanent reply: that server
 *   serves the domain (it took the connection), so what it could not route is
 *   the local part, an unknown user; only the sender's own MTA says it bare.
 */
export const REASON_OVERRIDES: ReadonlyArray<{
  from: ReadonlySet<BounceReason>;
  when?: RegExp;
  /** A second text condition, tried over the same texts as `when`. */
  also?: RegExp;
  klass?: '4' | '5';
  /** The report's action for the recipient (RFC 3464 §2.3.3). */
  action?: 'failed';
  unless?: RegExp;
  vague?: true;
  to: BounceReason;
}> = [
  {
    from: new Set(['user_unknown']),
    when: /in reply to (end of )?data\b|after (end of )?data\b|>>> data\s{0,4}\n?[> ]{0,4}<<< ?[45]/i,
    unless: /need rcpt|no valid recipients/i,
    to: 'policy_block',
  },
  {
    from: new Set(['user_unknown', 'host_unknown']),
    when: /in reply to mail from|after mail from|>>> mail from:?[ \t]{0,2}<[^>\n]{0,320}>[^\n]{0,200}\n[> \t]{0,4}<<< ?[45]/i,
    to: 'policy_block',
  },
  {
    from: new Set(['policy_block']),
    vague: true,
    klass: '5',
    when: /in reply to rcpt to|after rcpt to|>>> rcpt to:?[^\n]{0,400}\n[> \t]{0,4}<<< ?5|\[rcpt_to\]/i,
    unless: /polic|relay|not allowed|network|sender|\bip\b|client host/i,
    to: 'user_unknown',
  },
  { from: new Set(['system_error']), when: NETWORK_TROUBLE_WORDS, also: QUEUE_GAVE_UP_WORDS, to: 'expired' },
  { from: new Set(['system_error']), klass: '4', action: 'failed', when: /connection timed out/i, to: 'expired' },
  { from: new Set(['host_unknown']), klass: '4', when: QUEUE_GAVE_UP_WORDS, to: 'expired' },
  { from: new Set(['host_unknown']), klass: '5', when: /unrout(e)?able address/i, to: 'user_unknown' },
  {
    from: new Set(['host_unknown']),
    klass: '4',
    unless: /null mx|no mx|doesn'?t receive (e-?)?mail|does not accept mail/i,
    to: 'system_error',
  },
];
