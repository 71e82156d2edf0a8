/**
 * What a diagnostic's words say about a refusal on the receiving server's
 * rules: a list or content rule, spam named outright, sender authentication and
 * relaying, and the wording of IP blocks. Data only, for the ordered table of
 * bounce-reasons.ts; every pattern bounded.
 */
import { anyOf } from './reason.js';

/** A list's or a content rule's refusal (it may add "to reduce spam", so it is tried before spam). */
export const CONTENT_RULE_WORDS: RegExp = anyOf(
  [
    /recipient'?s? preferences/,
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
    // A malformed message: bare LF line ends (qpsmtpd answers with its barelf.html page, Postfix and Exim name them).
    /bare ?(lf|linefeed|cr)\b|barelf/,
  ],
  'i',
);

/** Spam named outright. */
export const SPAM_NAMED_WORDS: RegExp =
  /spam|\bube\b|unsolicited|black ?list(ed)? (ip|host|server)|\brbl\b|dnsbl|spamhaus|spamcop|barracuda|sorbs/i;

/**
 * A sender check that could not be made for now (a DNS timeout while fetching an SPF record or a
 * DKIM key: OpenDKIM's "DKIM key retrieval failed", pypolicyd-spf's "SPF Temporary Error"): a
 * trouble on the way, not a verdict on the sender. Tried before SENDER_RULE_WORDS, which would read
 * any mention of SPF or DKIM as the sender refused.
 */
export const AUTH_CHECK_TROUBLE_WORDS: RegExp = anyOf(
  [
    /\b(spf|dkim|dmarc)\b.{0,30}\b(temp ?error|temporary (error|failure)|dns timeout|lookup (timed out|failed))/,
    /dkim key retrieval failed/,
  ],
  'i',
);

/** Sender authentication and relaying (a spam refusal may add "set up SPF", so spam is tried first). */
export const SENDER_RULE_WORDS: RegExp = anyOf(
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
    // The sender's own domain or address refused (Haraka's "No MX for your FROM address"), not the recipient's.
    /(your|the) (from|sender|envelope sender|mail from) (address|domain)/,
    /sender'?s? domain/,
    // A HELO name refused (qpsmtpd's "HELO name is not fully qualified", Postfix's "Helo command rejected").
    /\b(helo|ehlo)\b.{0,40}\b(not fully qualified|fully-qualified|fqdn|invalid|rejected)/,
    /domain of sender/,
    /sender (address )?(rejected|denied|blocked|verify failed)/,
    // Orange's "Emetteur invalide. Invalid Sender"; XMail's "Your domain has not DNS/MX entries" (the sender's);
    // Citadel's "You must log in to send mail from example.com"; Kolab's "Sender ... is not allowed to send to recipient".
    /invalid sender/,
    /your domain has (not|no) (dns|mx)/,
    /must (first )?(log ?in|authenticate) to send/,
    /not allowed to send to/,
  ],
  'i',
);

/** The wording of IP and reputation blocks. */
export const SENDING_HOST_WORDS: RegExp = anyOf(
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
    // LogSat's "Your IP is temporarily blocked" after too much spam from it.
    /ip (address )?(is |was |has been )?(temporarily )?blocked/,
    /ptr record/,
    /reverse (dns|lookup|dns lookup)/,
    // Aruba's Forpsi mail servers: "554 ... no DNS reverse for 192.0.2.1" (support.arubacloud.pl, knowledge base a2837).
    /no dns reverse/,
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
    // Not "Connection refused by mx.example.net": that is sendmail's text for a refused TCP connection (err.c).
    /connection (rejected (by|from|due)|refused (from|due))/,
    /bad sender ip/,
    // qpsmtpd's karma plugin (a sender's record of bad connections); policyd-weight's "No DNS entries
    // for your MTA, HELO and Domain" (no reverse DNS, as the PTR wording above).
    /\bbad karma\b/,
    /no dns entries for your/,
    /\(bl\)/,
    /ip .{0,30} is (blocked|banned)/,
    /not accepting mail from/,
  ],
  'i',
);
