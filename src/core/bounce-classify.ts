/**
 * What a bounce means, from what it says: hard or soft, and why. Pure and
 * data-driven: a table of enhanced statuses and a table of phrases (the
 * wording of Postfix, Exim, Sendmail, qmail, Exchange, Gmail, Yahoo, SES and
 * others), not a chain of ifs. The order of judgement is the issue's: the
 * enhanced status first, then the reply code, then the diagnostic text.
 */

export type BounceReason =
  | 'user_unknown' | 'mailbox_full' | 'host_unknown' | 'account_disabled' | 'spam_block'
  | 'policy_block' | 'message_too_large' | 'expired' | 'rate_limited' | 'system_error';

/** Phrases in a diagnostic, in the order they are tried: the first match names the reason. */
export const REASON_PHRASES: ReadonlyArray<readonly [BounceReason, RegExp]> = [
  ['mailbox_full', /mailbox (is )?full|over ?quota|quota (exceeded|full)|exceed(s|ed)? (the )?(storage|quota)|insufficient (system )?storage|mailbox size limit|disk quota|full mailbox|mailfolder is full|user.{0,20}over.{0,10}quota|is over (its|the) (storage|quota)/i],
  ['message_too_large', /message (size )?(is )?too (big|large)|message (size )?exceeds|size (limit|exceeds)|exceeds? (the )?(maximum|max|fixed) (message )?size|mesg too big|message length exceeds/i],
  ['account_disabled', /disabled (recipient|mailbox|account|address|user)|account is blocked|account (has been |is )?(disabled|suspended|deactivated|inactive|locked|closed)|mailbox (has been |is )?(disabled|inactive|suspended|closed)|(user|recipient) (account )?(is )?(disabled|suspended|inactive)|no longer (active|available|in use)|account (is )?unavailable|this account has been|mailbox .{0,30}not (active|enabled)/i],
  ['spam_block', /banned sending ip|ip name lookup failed|unverifi?yable sending ips?|smtp server of your isp|internet service provider|invalid ip for sending|messages from \d{1,3}(\.\d{1,3}){3}|spam|black ?list|block ?list|\brbl\b|dnsbl|spamhaus|spamcop|barracuda|sorbs|reputation|listed (at|in|on|by)|blocked (by|using|because|due)|ip (address )?(is )?blocked|ptr record|reverse (dns|lookup|dns lookup)|rdns|junk mail|bulk mail|message (was )?(considered|classified|identified) as|not allowed to send|client host .{0,40}blocked/i],
  ['user_unknown', /user unknown|invalid .{0,20}userid|unknown user|no such (user|mailbox|recipient|address|account)|user (not found|does not exist|doesn'?t exist)|(recipient|mailbox|e-?mail account|account) (address )?(does not exist|doesn'?t exist|not found|unknown)|(address|e-?mail account) (that )?you tried to reach does not exist|(invalid|unknown|bad|unrouteable|unroutable) (recipient|mailbox|user)|not a valid (recipient|mailbox|user|address)|no mailbox|mailbox (not found|unavailable)|unknown local[- ]part|bad destination mailbox|address (is )?(unknown|invalid)|is not a known user|undeliverable address|user.{0,20}(is )?not (listed|local|known)|no account by that name|unable to find (the )?recipient|not our customer|has moved|invalid address/i],
  ['host_unknown', /host (or domain name )?(not found|unknown)|unknown host|(domain|host) (name )?(not found|does not exist|unknown)|no such (domain|host)|name or service not known|nxdomain|unrouteable (mail )?domain|null mx|no mx (record|host)|dns (error|lookup|failure)|domain (is )?(invalid|not (exist|accept))|domain is not reachable|host not reachable|does not accept mail/i],
  ['rate_limited', /rate limit|too many (messages|connections|recipients|mails)|throttl|slow down|exceeded .{0,30}(rate|limit|connections)|sending limit|temporarily (rate|deferred)|too fast|try again later, closing connection/i],
  ['expired', /connection timed out|failed \d+ attempts|delivery time expired|retry time(out)? (exceeded|expired|reached)|message (has )?expired|could not be delivered (for|within) \d+|has (not yet )?been delivered|delayed|queued too long|too long in (the )?queue|giving up|gave up|expired after|time limit exceeded|timeout exceeded|delivery (attempts )?will continue|no answer from host|retry timeout/i],
  ['policy_block', /not allowed|unrout(e)?able sender|sender address|polic(y|ies)|dmarc|\bspf\b|dkim|not permitted|relay(ing)? (denied|not permitted|access denied|prohibited)|not allowed to relay|content (rejected|filter|not accepted)|virus|malware|infected|message rejected|rejected (by|due|for|because)|sender (address )?(rejected|denied|blocked)|not authori[sz]ed|authentication (required|failed)|access denied|tls (is )?required|encryption required|must use tls|filtered|denied|refused|prohibited|banned|restricted|not accepted|syntax/i],
  ['system_error', /system error|no route to host|name service error|internal (server )?error|local error|temporary (failure|error|problem)|connection (refused|reset|timed? out|lost|closed)|network|mail system (is )?full|i\/o error|server error|out of memory|loop(s)? (back|detected)|routing loop|mail(er)? loop|too many hops|resources temporarily|unavailable|try again/i],
];

/** Enhanced statuses that name one reason whatever the text says (tried before the phrases). */
export const DEFINITE_STATUSES: ReadonlyArray<readonly [RegExp, BounceReason]> = [
  [/^\d\.1\.(1|10)$/, 'user_unknown'],
  [/^\d\.1\.2$/, 'host_unknown'],
  [/^\d\.2\.2$/, 'mailbox_full'],
  [/^\d\.(2\.3|3\.4)$/, 'message_too_large'],
  [/^\d\.4\.7$/, 'expired'],
  [/^\d\.7\.(23|24|25|26|27)$/, 'policy_block'],
];

/** Enhanced statuses (RFC 3463), most specific first: `x.y.z`, then `x.y`; tried after the phrases. */
export const STATUS_REASONS: ReadonlyArray<readonly [RegExp, BounceReason]> = [
  [/^\d\.1\.(1|0|3|6|10)$/, 'user_unknown'],
  [/^\d\.1\.2$/, 'host_unknown'],
  [/^\d\.4\.4$/, 'host_unknown'],
  [/^\d\.2\.1$/, 'account_disabled'],
  [/^\d\.2\.2$/, 'mailbox_full'],
  [/^\d\.2\.3$/, 'message_too_large'],
  [/^\d\.3\.4$/, 'message_too_large'],
  [/^\d\.4\.7$/, 'expired'],
  [/^\d\.7\.(1|0|2|3|4|5|6|7|8|9|\d\d)$/, 'policy_block'],
  [/^\d\.4\.6$/, 'system_error'],
  [/^\d\.3\.\d+$/, 'system_error'],
  [/^\d\.4\.\d+$/, 'system_error'],
  [/^\d\.5\.\d+$/, 'system_error'],
  [/^\d\.1\.\d+$/, 'user_unknown'],
  [/^\d\.2\.\d+$/, 'mailbox_full'],
];

/** Without a status or a code, a reason that says the message may still get through. */
const SOFT_REASONS: ReadonlySet<BounceReason> = new Set(['expired', 'rate_limited']);
/** Without a status or a code, what the reason alone says. */
const HARD_REASONS: ReadonlySet<BounceReason> = new Set(['user_unknown', 'host_unknown', 'account_disabled', 'policy_block', 'spam_block', 'message_too_large']);

// Not inside an address or a version number (192.2.3.4, 1.2.3.4).
export const ENHANCED_STATUS = /(?<![\d.])([245])\.(\d{1,3})\.(\d{1,3})(?![\d]|\.\d)/;
export const REPLY_CODE = /(?:^|[^\d.])([245]\d\d)(?:[ -]|$)/;

export function findStatus(text: string): string | null {
  const match = ENHANCED_STATUS.exec(text);
  return match === null ? null : `${match[1]}.${match[2]}.${match[3]}`;
}

export function findReplyCode(text: string): string | null {
  return REPLY_CODE.exec(text)?.[1] ?? null;
}

export function reasonOf(status: string | null, text: string): BounceReason | null {
  if (status !== null) for (const [pattern, reason] of DEFINITE_STATUSES) if (pattern.test(status)) return reason;
  for (const [reason, pattern] of REASON_PHRASES) if (pattern.test(text)) return reason;
  if (status !== null) for (const [pattern, reason] of STATUS_REASONS) if (pattern.test(status)) return reason;
  return null;
}

/**
 * Hard or soft: a delay is soft; then the enhanced status's class, the reply
 * code's, and the reason. Null when nothing says (then nobody should act on it).
 */
export function bounceTypeOf(input: { action: string | null; status: string | null; replyCode: string | null; reason: BounceReason | null }): 'hard' | 'soft' | null {
  const action = input.action?.toLowerCase() ?? null;
  if (action === 'delayed') return 'soft';
  const klass = input.status?.[0] ?? input.replyCode?.[0] ?? null;
  if (klass === '5') return 'hard';
  if (klass === '4') return 'soft';
  if (action === 'failed') return 'hard';
  if (input.reason === null) return null;
  if (SOFT_REASONS.has(input.reason)) return 'soft';
  return HARD_REASONS.has(input.reason) ? 'hard' : 'soft';
}
