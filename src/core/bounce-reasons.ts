/**
 * The rule tables behind core/bounce-classify.ts: what a bounce's enhanced
 * status (RFC 3463) and its wording say about why it failed and whether it
 * will get through later. Data only, tried in order; every pattern is bounded
 * (no nested or unbounded repetition before a literal) so that a hostile
 * diagnostic cannot make it backtrack.
 */

/** One pattern from alternatives written one per line: the same as their sources joined by `|`. */
function anyOf(alternatives: readonly RegExp[], flags: string): RegExp {
  return new RegExp(alternatives.map((alternative) => alternative.source).join('|'), flags);
}

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

/**
 * Google Groups' standard refusal ("... or you may not have permission to post
 * messages to the group"), by the language Google writes it in (the sender's):
 * its words for "permission to post". Other list servers say the same in
 * English ("not a member", "moderator"), in the phrases below.
 */
export const GROUP_POSTING_REFUSALS: ReadonlyArray<readonly [language: string, pattern: RegExp]> = [
  ['en', /permission to post/i],
  ['de', /Berechtigung(en)?\b.{0,60}\bposten/i],
  ['fr', /autoris[ée]e?s? à (lui |y )?(envoyer|publier|poster) des messages/i],
  ['es', /permisos? (necesarios? )?para publicar/i],
  ['it', /autorizzazion[ei] (necessari[ae] )?(a|per) pubblicare/i],
  ['pt', /permissão (necessária )?para (postar|publicar)/i],
  ['nl', /toestemming .{0,40}te (posten|plaatsen)/i],
  ['cs', /oprávnění .{0,30}(přidávat|publikovat) příspěvky/i],
  ['pl', /uprawnień do (publikowania|wysyłania)/i],
  ['ru', /(разрешения|прав) на (публикацию|отправку)/i],
  ['el', /δικαίωμα ανάρτησης/i],
  ['hi', /पोस्ट करने की अनुमति/],
  ['ja', /投稿する権限/],
  ['zh', /(发帖|發文|发布|發佈)的?(权限|權限)/],
  ['ko', /게시할 (수 있는 )?권한/],
];

/**
 * Phrases in a diagnostic, in the order they are tried: the first match names
 * the reason. Specific wordings come before generic ones ("denied", "rejected",
 * "unavailable"), which only say that the server refused.
 */
export const REASON_PHRASES: ReadonlyArray<readonly [BounceReason, RegExp]> = [
  // A list that takes no post from this sender is the list's rule (its own refusal may also say the group "may not exist").
  ...GROUP_POSTING_REFUSALS.map(([, pattern]) => ['policy_block', pattern] as const),
  [
    'mailbox_full',
    anyOf(
      [
        /mailbox (is )?full/,
        /over ?quota/,
        /quota (exceeded|full|violation)/,
        /exceed(s|ed)? (the |his |her |their )?(storage|quota|mailbox)/,
        /insufficient (system )?storage/,
        /mailbox size limit/,
        /disk quota/,
        /full mailbox/,
        /mail ?(box|folder) (is )?(full|over)/,
        /user.{0,20}over.{0,10}quota/,
        /is over (its|the) (storage|quota)/,
        /not enough (storage|space)/,
        /mailbox has exceeded/,
        /messages in recipient's mailbox exceeded/,
        /account is full/,
        /box is full/,
        /storage (limit|quota|space)/,
        /out of storage/,
        /maildir over/,
      ],
      'i',
    ),
  ],
  [
    'message_too_large',
    anyOf(
      [
        /message (size )?(is )?too (big|large)/,
        /message (size )?exceeds/,
        /size (limit|exceeds)/,
        /exceeds? (the )?(maximum|max|fixed|allowed|size) (message )?size/,
        /mesg too big/,
        /message length exceeds/,
        /message is larger than/,
        /too large for/,
        /size of (the )?message/,
        /message size (is )?(over|above|greater)/,
        /exceeded the max(imum)? (message )?size/,
      ],
      'i',
    ),
  ],
  [
    'account_disabled',
    anyOf(
      [
        /disabled (recipient|mailbox|account|address|user)/,
        /(account|mailbox) (that )?you tried to reach is (disabled|inactive|suspended)/,
        /account is blocked/,
        /account (has been |is |was )?(disabled|suspended|deactivated|inactive|locked|closed|expired|frozen)/,
        /mailbox (has been |is |was )?(disabled|inactive|suspended|closed|deactivated|locked|frozen)/,
        /(user|recipient|address) (account )?(is |has been )?(disabled|suspended|inactive|deactivated)/,
        /no longer (active|available|in use|valid)/,
        /account (is )?unavailable/,
        /this account has been/,
        /mailbox .{0,30}not (active|enabled)/,
        /user account expired/,
        /(mailbox|account) temporarily (disabled|suspended)/,
        /recipient suspended/,
        /mailbox currently suspended/,
        /service (is )?suspended/,
        /suspended (account|mailbox|user)/,
      ],
      'i',
    ),
  ],
  // What the server's rules refused, named precisely, and spam named outright, in this order:
  // a list or content rule first (a refusal may add "to reduce spam"), explicit spam words, then sender
  // authentication and relaying (a spam refusal may add "set up SPF"), then the wording of IP blocks.
  [
    'policy_block',
    anyOf(
      [
        /recipient preferences/,
        /you are not a member/,
        /not a member of/,
        /not permitted to post/,
        /moderator/,
        /closed (mailing )?list/,
        /virus/,
        /malware/,
        /infected/,
        /content presents/,
        /security (issue|policy|reasons)/,
        /not (rfc ?5322|rfc ?2822|rfc) compliant/,
        /rfc ?5322/,
      ],
      'i',
    ),
  ],
  ['spam_block', /spam|\bube\b|unsolicited|black ?list(ed)? (ip|host|server)|\brbl\b|dnsbl|spamhaus|spamcop|barracuda|sorbs/i],
  [
    'policy_block',
    anyOf(
      [
        /polic(y|ies)/,
        /not configured to relay/,
        /authentication (required|failed)/,
        /\bspf\b/,
        /dkim/,
        /dmarc/,
        /sender policy framework/,
        /not authori[sz]ed/,
        /relay(ing)? (denied|not permitted|access denied|prohibited)/,
        /not allowed to relay/,
        /unable to relay/,
        /we do not relay/,
        /relay not permitted/,
        /tls (is )?required/,
        /encryption required/,
        /must use tls/,
        /starttls/,
        /(address|sender|domain) that (has been|is) (black|block)listed/,
        /sender address/,
        /domain of sender/,
        /sender (address )?(rejected|denied|blocked|verify failed)/,
      ],
      'i',
    ),
  ],
  [
    'spam_block',
    anyOf(
      [
        /banned sending ip/,
        /ip name lookup failed/,
        /unverifi?yable sending ips?/,
        /smtp server of your isp/,
        /internet service provider/,
        /invalid ip for sending/,
        /messages from \d{1,3}(\.\d{1,3}){3}/,
        /spam/,
        /\bube\b/,
        /black ?list/,
        /block ?list/,
        /\brbl\b/,
        /dnsbl/,
        /spamhaus/,
        /spamcop/,
        /barracuda/,
        /sorbs/,
        /reputation/,
        /(?<!not )listed (at|in|on|by)/,
        /blocked (by|using|because|due|for)/,
        /ip (address )?(is |was |has been )?blocked/,
        /ptr record/,
        /reverse (dns|lookup|dns lookup)/,
        /rdns/,
        /junk mail/,
        /bulk mail/,
        /message (was )?(considered|classified|identified|detected) as/,
        /not allowed to send/,
        /client host .{0,40}(blocked|rejected)/,
        /may not be mail exchanger/,
        /unsolicited/,
        /dynamic ip/,
        /dial-?up/,
        /residential/,
        /user complaints/,
        /(your|the sending) (ip|server|host) (address )?(is )?(blocked|banned|not allowed)/,
        /host rejected/,
        /connection (rejected|refused) (by|from|due)/,
        /bad sender ip/,
        /\(bl\)/,
        /ip .{0,30} is (blocked|banned)/,
        /not accepting mail from/,
      ],
      'i',
    ),
  ],
  [
    'user_unknown',
    anyOf(
      [
        /user unknown/,
        /unknown user/,
        /invalid .{0,20}userid/,
        /no such (user|mailbox|recipient|address|account|person)/,
        /user (not found|does not exist|doesn'?t exist|not exist)/,
        /(recipient|mailbox|e-?mail account|account|address) (address )?(does not exist|doesn'?t exist|not found|unknown|not exist)/,
        /(address|e-?mail account) (that )?you tried to reach does not exist/,
        /(invalid|unknown|bad|non-?existent) (recipient|mailbox|user|address|e-?mail)/,
        /not a valid (recipient|mailbox|user|address)/,
        /no mailbox/,
        /mailbox (not found|unavailable|does not exist)/,
        /unknown local[- ]part/,
        /bad destination mailbox/,
        /address (is )?(unknown|invalid)/,
        /is not a known user/,
        /undeliverable address/,
        /user.{0,20}(is )?not (listed|local|known)/,
        /no account by that name/,
        /unable to find (the )?recipient/,
        /not our customer/,
        /has moved/,
        /invalid address/,
        /recipient not found/,
        /recipient address rejected: access denied/,
        /doesn'?t have a .{1,40} account/,
        /not listed in (the )?(domino )?directory/,
        /unknown (or invalid )?recipient/,
        /addressee unknown/,
        /no valid recipients/,
        /recipient (is )?not (valid|found)/,
        /unknown address/,
        /no such local user/,
        /account does not exist/,
        /not a registered user/,
        /address (could not|couldn'?t) be found/,
        /recipient name is not recognized/,
        /nicht gefunden/,
        /inexistant/,
        /no existe/,
      ],
      'i',
    ),
  ],
  // A name server that failed for now is a network trouble, not a verdict on the domain. A host that
  // refuses the connection or cannot be reached is up to no verdict either: named in the diagnostic, it
  // outranks a queue's "could not be delivered for 4 hours" (a timeout, after retries, is expiry).
  [
    'system_error',
    anyOf(
      [
        /host not found, try again/,
        /temporary local problem/,
        /network (error|unreachable|failure)/,
        /no route to host/,
        /connection refused/,
        /ldap server/,
        /directory server/,
        /temporary (dns|name ?server|lookup) (failure|error)/,
        /servfail/,
        /operating system error/,
        /mailer error/,
        /local (configuration )?error/,
        /i\/o error/,
        /internal (server )?error/,
        /out of memory/,
        /bad interpreter/,
        /failed to (read|open|write)/,
        /pipe to/,
      ],
      'i',
    ),
  ],
  // Exim's "Unrouteable address": no router took the address, which for a remote domain means its DNS
  // lookup found nothing (a remote server's 5xx reply with those words is corrected in REASON_OVERRIDES).
  [
    'host_unknown',
    anyOf(
      [
        /unrout(e)?able address/,
        /host (or domain name )?(not found|unknown)/,
        /unknown host/,
        /(domain|host) (name )?(not found|does not exist|unknown)/,
        /no such (domain|host)/,
        /name or service not known/,
        /nxdomain/,
        /unrouteable (mail )?domain/,
        /null mx/,
        /no mx (record|host)/,
        /dns (error|lookup|failure)/,
        /domain (is )?(invalid|not (exist|accept))/,
        /domain is not reachable/,
        /host not reachable/,
        /does not accept mail/,
        /doesn'?t receive (e-?)?mail/,
        /(?<![@\w.-])[a-z0-9-]{1,63}(\.[a-z0-9-]{1,63}){1,8} does not exist/,
        /unknown domain/,
        /invalid domain/,
        /mx (record )?lookup failed/,
        /no (valid )?mx/,
        /not accept(ing)? (e-?)?mail/,
        /domain not found/,
      ],
      'i',
    ),
  ],
  [
    'rate_limited',
    anyOf(
      [
        /rate limit/,
        /too many (messages|connections|recipients|mails|sessions|emails)/,
        /throttl/,
        /slow down/,
        /exceeded .{0,30}(rate|limit|connections)/,
        /sending limit/,
        /temporarily (rate|deferred)/,
        /too fast/,
        /try again later, closing connection/,
        /unexpected volume/,
        /receiving too much mail/,
        /exceeded the (maximum )?number of/,
        /frequency limit/,
        /over the limit/,
      ],
      'i',
    ),
  ],
  [
    'expired',
    anyOf(
      [
        /connection timed out/,
        /timed out/,
        /failed \d+ attempts/,
        /delivery time expired/,
        /retry time(out)? (exceeded|expired|reached)/,
        /have been failing for a long time/,
        /message (has )?expired/,
        /could not be delivered (for|within) \d+/,
        /has (not yet )?been delivered/,
        /delayed/,
        /queued too long/,
        /too long in (the )?queue/,
        /in the queue too long/,
        /giving up/,
        /gave up/,
        /expired after/,
        /time limit exceeded/,
        /timeout exceeded/,
        /delivery (attempts )?will continue/,
        /no answer from host/,
        /retry timeout/,
        /message could not be delivered for/,
        /has been delayed/,
        /did not accept our requests to connect/,
        /not (been )?delivered .{0,20}(hours|days)/,
        /undelivered after/,
        /will keep trying/,
        /aborted after \d/,
        /deferred .{0,30}(hours|days)/,
        /unable to deliver in \d+/,
        /could not deliver .{0,30}(hours|days)/,
        /delivery period expired/,
      ],
      'i',
    ),
  ],
];

/**
 * Vague words ("denied", "unavailable", "try again"): tried only when no text about the
 * recipient names a reason precisely, so a relay's generic summary does not hide a
 * precise reason given elsewhere.
 */
export const GENERIC_REASON_PHRASES: ReadonlyArray<readonly [BounceReason, RegExp]> = [
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
 * ("550 5.1.1 Refused due to recipient preferences").
 */
export const DECISIVE_PHRASES: ReadonlyArray<readonly [BounceReason, RegExp]> = [
  ['policy_block', /recipient preferences|refuses? to (receive|accept) (mail|messages?|e-?mails?) from|blocked by the recipient|recipient has blocked/i],
];

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
 * - A transient (4.x.x) name-server failure is a network trouble, unless the
 *   domain itself says it takes no mail (null MX, RFC 7505).
 * - "Unrouteable address" in a remote server's permanent reply: that server
 *   serves the domain (it took the connection), so what it could not route is
 *   the local part, an unknown user; only the sender's own MTA says it bare.
 */
export const REASON_OVERRIDES: ReadonlyArray<{
  from: ReadonlySet<BounceReason>;
  when?: RegExp;
  klass?: '4' | '5';
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
  { from: new Set(['host_unknown']), klass: '5', when: /unrout(e)?able address/i, to: 'user_unknown' },
  { from: new Set(['host_unknown']), klass: '4', unless: /null mx|no mx|doesn'?t receive (e-?)?mail|does not accept mail/i, to: 'system_error' },
];

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
