import { describe } from 'vitest';
import { itReadsEach, type DocumentedRefusal } from '../../../test/helpers/bounce-reading.js';

/**
 * Refusals as the standards and the vendors document them (written for this test from their
 * documentation, with example.* names; none taken from a sample corpus): the reason must follow
 * from the codes and wording alone, whichever MTA wrote them. This is the held-out check for the
 * rule tables: a rule fitted to one MTA's sample bounces would not carry over to these.
 */
const DOCUMENTED: readonly DocumentedRefusal[] = [
  // RFC 3463 / RFC 5248 registry details alone
  ['RFC 3463 5.1.1', '550 5.1.1 Requested action not taken', 'user_unknown'],
  ['RFC 3463 5.1.2', '550 5.1.2 Bad destination system address', 'host_unknown'],
  ['RFC 3463 5.1.6', '550 5.1.6 Destination mailbox has moved', 'user_unknown'],
  ['RFC 3463 5.2.1', '550 5.2.1 Mailbox disabled, not accepting messages', 'account_disabled'],
  ['RFC 3463 4.2.2', '452 4.2.2 Mailbox full', 'mailbox_full'],
  ['RFC 3463 5.2.3', '552 5.2.3 Message length exceeds administrative limit', 'message_too_large'],
  ['RFC 3463 5.3.4', '552 5.3.4 Message too big for system', 'message_too_large'],
  ['RFC 3463 4.4.7', '4.4.7 Delivery time expired', 'expired'],
  ['RFC 3463 5.5.3', '452 4.5.3 Too many recipients', 'rate_limited'],
  ['RFC 5248 5.7.13', '525 5.7.13 User account disabled', 'account_disabled'],
  ['RFC 7372 5.7.26', '550 5.7.26 Multiple authentication checks failed', 'policy_block'],
  ['RFC 7505 5.1.10', '556 5.1.10 Recipient address has null MX', 'host_unknown'],
  // RFC 5321 §4.2 and RFC 7504 reply codes without an enhanced status
  ['RFC 5321 552', '552 Requested mail action aborted: exceeded storage allocation', 'mailbox_full'],
  ['RFC 5321 553', '553 Requested action not taken: mailbox name not allowed', 'user_unknown'],
  ['RFC 7504 556', '556 Domain does not accept mail', 'host_unknown'],
  ['RFC 4954 535', '535 Authentication credentials invalid', 'policy_block'],
  // Exchange Online NDR reference
  [
    'Exchange 5.1.10',
    '550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup',
    'user_unknown',
  ],
  ['Exchange 5.4.1 DBEB', '550 5.4.1 Recipient address rejected: Access denied. AS(201806281)', 'user_unknown'],
  ['Exchange 5.2.2', '554 5.2.2 mailbox full; STOREDRV.Deliver.Exception:QuotaExceededException', 'mailbox_full'],
  ['Exchange 5.7.606', '550 5.7.606 Access denied, banned sending IP [192.0.2.1]', 'spam_block'],
  ['Exchange 5.7.57', '530 5.7.57 Client not authenticated to send anonymous mail during MAIL FROM', 'policy_block'],
  [
    'Exchange 5.3.4',
    '552 5.3.4 RESOLVER.RST.RecipSizeLimit; message too large for this recipient',
    'message_too_large',
  ],
  ['Exchange 5.4.14', '554 5.4.14 Hop count exceeded - possible mail loop', 'system_error'],
  ['Exchange 5.7.705', '550 5.7.705 Access denied, tenant has exceeded threshold', 'spam_block'],
  // 5.1.8 "bad outbound sender": the account is blocked for the spam it sent; Microsoft's words outrank RFC 3463's x.1.8.
  ['Exchange 5.1.8', '550 5.1.8 Access denied, bad outbound sender', 'spam_block', 'policy_block'],
  ['Exchange 5.2.1 content filter', '5.2.1 Content Filter agent quarantined this message', 'spam_block', 'another'],
  [
    'Exchange 4.3.2 folder item limit',
    '554 4.3.2 mailbox busy; STOREDRV.Deliver.Exception:StoragePermanentException.MapiExceptionMaxObjsExceeded; Failed to process message due to a permanent exception',
    'mailbox_full',
    'another',
  ],
  [
    'Exchange 5.2.0 store exception',
    '554 5.2.0 STOREDRV.Deliver.Exception:ObjectNotFoundException.MapiExceptionNotFound; Failed to process message due to a permanent exception with message Cannot get ID from name',
    'system_error',
    'another',
  ],
  [
    'Exchange 4.3.2 thread limit',
    '432 4.3.2 STOREDRV.Deliver; recipient thread limit exceeded',
    'rate_limited',
    'another',
  ],
  ['Exchange 4.7.500 throttling', '451 4.7.500 Access denied, please try again later', 'rate_limited', 'another'],
  [
    'Exchange 5.2.121',
    "5.2.121 Recipient's per hour message receive limit from specific sender exceeded",
    'rate_limited',
    'another',
  ],
  ['Exchange 5.7.510', '550 5.7.510 Access denied, example.com does not accept email over IPv6', 'policy_block'],
  ['Exchange 5.2.122', '550 5.2.122 RecipientPerHourMessageReceiveLimitExceeded', 'rate_limited'],
  [
    'Exchange 5.1.90',
    "550 5.1.90 Your message can't be sent because you've reached your daily limit for message recipients",
    'rate_limited',
  ],
  // Gmail SMTP error reference
  [
    'Gmail 5.1.1',
    "550-5.1.1 The email account that you tried to reach does not exist. Please try double-checking the recipient's email address",
    'user_unknown',
  ],
  ['Gmail 5.2.1', '550-5.2.1 The email account that you tried to reach is disabled.', 'account_disabled'],
  ['Gmail 4.2.2', '452-4.2.2 The email account that you tried to reach is over quota.', 'mailbox_full'],
  [
    'Gmail 4.2.1',
    '450-4.2.1 The user you are trying to contact is receiving mail at a rate that prevents additional messages from being delivered.',
    'rate_limited',
  ],
  ['Gmail 5.7.1 spam', '550-5.7.1 Our system has detected that this message is likely unsolicited mail.', 'spam_block'],
  [
    'Gmail 5.7.0 security',
    '552-5.7.0 This message was blocked because its content presents a potential security issue.',
    'policy_block',
  ],
  [
    'Gmail 4.7.28',
    '421-4.7.28 Our system has detected an unusual rate of unsolicited mail originating from your IP address.',
    'spam_block',
  ],
  [
    'Gmail 5.7.26',
    '550-5.7.26 This mail is unauthenticated, which poses a security risk to the sender and Gmail users',
    'policy_block',
  ],
  ['Gmail 5.4.5', '550-5.4.5 Daily sending quota exceeded.', 'rate_limited'],
  [
    'Gmail 4.2.1 relay limit',
    '450 4.2.1 Peak SMTP relay limit exceeded for this customer. - gsmtp',
    'rate_limited',
    'another',
  ],
  // Google Groups' refusal notice in a language no phrase covers: its help-center link names it (the
  // public group's, and a Workspace group's Groups topic)
  [
    'Google Groups, any language',
    'Hej ann@example.net, gruppen du försökte kontakta (owls) finns kanske inte. Hjälpcentret: https://groups.google.com/support/',
    'policy_block',
  ],
  [
    'Google Groups, Workspace',
    'Visit the Help Center at https://support.google.com/a/example.com/bin/topic.py?topic=25838.',
    'policy_block',
  ],
  // Yahoo Sender Hub SMTP error codes
  ['Yahoo dd', "554 delivery error: dd This user doesn't have a yahoo.com account (ann@yahoo.com) [0]", 'user_unknown'],
  [
    'Yahoo TSS04',
    '421 4.7.0 [TSS04] Messages from 192.0.2.1 temporarily deferred due to unexpected volume or user complaints',
    'spam_block',
  ],
  [
    'Yahoo BL21',
    "553 5.7.1 [BL21] Connections will not be accepted from 192.0.2.1, because the ip is in Spamhaus's list",
    'spam_block',
  ],
  // Amazon SES
  [
    'SES suppression',
    'Amazon SES has suppressed sending to this address because it has a recent history of bouncing as an invalid address.',
    'user_unknown',
  ],
  // Postfix smtpd(8), local(8)
  [
    'Postfix local',
    '550 5.1.1 <ann@example.net>: Recipient address rejected: User unknown in local recipient table',
    'user_unknown',
  ],
  ['Postfix relay', '554 5.7.1 <ann@example.org>: Relay access denied', 'policy_block'],
  [
    'Postfix RBL',
    '554 5.7.1 Service unavailable; Client host [192.0.2.1] blocked using zen.spamhaus.org',
    'spam_block',
  ],
  ['Postfix rDNS', '450 4.7.1 Client host rejected: cannot find your reverse hostname, [192.0.2.1]', 'spam_block'],
  // Aruba's Forpsi servers refuse a sending IP without reverse DNS (support.arubacloud.pl, knowledge base a2837)
  [
    'Forpsi no reverse DNS',
    '554 cmg1.fe.example.com bizsmtp 0bcW1i00G0jifNx01bcmHa no DNS reverse for 192.0.2.1',
    'spam_block',
  ],
  ['Postfix size', '552 5.3.4 Message size exceeds fixed limit', 'message_too_large'],
  ['Postfix domain', '450 4.1.2 <ann@nowhere.example>: Recipient address rejected: Domain not found', 'host_unknown'],
  // Postfix's SMTP client on one attempt that did not get through (smtp_connect.c, smtp_trouble.c): a network trouble
  ['Postfix connect timeout', 'connect to mx.example.net[192.0.2.1]:25: Connection timed out', 'system_error'],
  [
    'Postfix lost connection',
    'lost connection with mx.example.net[192.0.2.1] while receiving the initial server greeting',
    'system_error',
  ],
  [
    'Postfix conversation timeout',
    'conversation with mx.example.net[192.0.2.1] timed out while sending end of data -- message may be sent more than once',
    'system_error',
  ],
  // Exim
  ['Exim unrouteable', 'Unrouteable address', 'host_unknown'],
  ['Exim retry', 'retry timeout exceeded', 'expired'],
  ['Exim ACL deny', '550 Administrative prohibition', 'policy_block'],
  ['Exim quota', 'mailbox is full (MTA-imposed quota exceeded while writing to file /var/mail/ann)', 'mailbox_full'],
  [
    'Exim connections per host',
    '421 Too many concurrent SMTP connections from this IP address; please try again later.',
    'rate_limited',
    'another',
  ],
  ['Exim MX to nowhere', 'all relevant MX records point to non-existent hosts', 'host_unknown'],
  // Dovecot LMTP (lmtp_user_concurrency_limit); Haraka's limit and mail_from.is_resolvable plugins
  [
    'Dovecot LMTP concurrency',
    '451 4.3.0 <ann@example.com> Too many concurrent deliveries for user',
    'rate_limited',
    'another',
  ],
  ['Haraka connections', '421 Too many concurrent connections', 'rate_limited', 'another'],
  ['Haraka sender MX', '550 No MX for your FROM address', 'policy_block', 'another'],
  // qmail
  ['qmail 5.1.1', 'Sorry, no mailbox here by that name. (#5.1.1)', 'user_unknown'],
  ['qmail 5.1.2', "Sorry, I couldn't find any host named example.invalid. (#5.1.2)", 'host_unknown'],
  ['qmail 5.4.4', "Sorry, I couldn't find a mail exchanger or IP address. (#5.4.4)", 'host_unknown'],
  ['qmail 4.4.7', "I'm not going to try again; this message has been in the queue too long.", 'expired'],
  // Sendmail
  ['Sendmail user', '550 5.1.1 <ann@example.net>... User unknown', 'user_unknown'],
  ['Sendmail host', '5.1.2 Host unknown (Name server: mx.example.invalid: host not found)', 'host_unknown'],
  ['Sendmail expiry', 'Cannot send message for 5 days', 'expired'],
  ['Sendmail relay', '550 5.7.1 <ann@example.org>... Relaying denied', 'policy_block'],
  // Sendmail's err.c texts for a connection that failed (ECONNREFUSED, ETIMEDOUT, EHOSTDOWN, a name server's TRY_AGAIN)
  ['Sendmail refused', 'Deferred: Connection refused by mx.example.net.', 'system_error'],
  ['Sendmail timeout', 'Deferred: Connection timed out with mx.example.net.', 'system_error'],
  ['Sendmail host down', 'Deferred: Host mx.example.net is down', 'system_error'],
  ['Sendmail name server', 'Deferred: Name server: mx.example.net.: host name lookup failure', 'system_error'],
  // SparkPost's "Understanding delays and bounces": the timeout bounce when the retries ran out, quoting the last transient failure
  [
    'SparkPost message timeout',
    '554 5.4.7 [internal] message timeout (last transfail: 454 4.4.4 [internal] no MX or A for domain)',
    'expired',
  ],
  // Filters and policy daemons: rspamd's ratelimit, postfwd's documented rate and size rules, OpenDKIM,
  // pypolicyd-spf (a DNS timeout is no verdict on the sender), Proofpoint's invalid-address list
  ['rspamd ratelimit', '451 4.7.1 Ratelimit "to_ip_from" exceeded', 'rate_limited', 'another'],
  ['postfwd recipient rate', '450 4.7.1 only 5 recipients per 5 minutes allowed', 'rate_limited', 'another'],
  ['postfwd daily volume', 'only 20mb per day for ann@example.org', 'rate_limited'],
  ['postfwd recipients', 'max recipient count is 200 - you had 201 recipients', 'rate_limited'],
  ['postfwd size', 'max message size is 30MB - you had 31457282 bytes', 'message_too_large'],
  ['OpenDKIM key', '451 4.7.5 DKIM key retrieval failed', 'system_error', 'another'],
  [
    'pypolicyd-spf temperror',
    '450 4.7.24 Message deferred due to: SPF Temporary Error: DNS timeout. Please see http://www.openspf.net/Why?s=mfrom',
    'system_error',
    'another',
  ],
  [
    'Proofpoint marked invalid',
    '550 5.7.1 Recipient address rejected: User email address is marked as invalid',
    'user_unknown',
    'another',
  ],
  // Other servers: Mox, Postal, Stalwart and nullmailer delay notices, Sympa, IceWarp, SendGrid's relayed deferral
  [
    'Mox daily limit',
    '451 4.7.1 max number of messages (1000) over past 24h reached, try increasing per-account setting',
    'rate_limited',
    'another',
  ],
  ['Postal send limit', 'Message held because send limit (10000) has been reached.', 'rate_limited'],
  ['Postal no server', 'No SMTP servers were available for example.net. Tried mx1.example.net.', 'system_error'],
  [
    'Stalwart delay',
    'Warning: Delay in message delivery - There was a temporary problem delivering your message',
    'expired',
  ],
  [
    'nullmailer delay',
    'The message attached below has not been delivered to one or more of the intended recipients. A final delivery status notification will be generated if delivery fails.',
    'expired',
  ],
  [
    'Sympa unknown list',
    'The following address is not a known mailing list: announce@lists.example.com',
    'user_unknown',
  ],
  [
    'Sympa size',
    'Your message could not be sent because its size (12000 kB) was over the maximum size (5120 kB) allowed on this list.',
    'message_too_large',
  ],
  ['IceWarp size', '501 5.7.1 Message is too long', 'message_too_large', 'another'],
  [
    'SendGrid deferral',
    '450 too frequent connects from 192.0.2.10, please try again later.',
    'rate_limited',
    'another',
  ],
  // qpsmtpd, ZoneMTA, aiosmtpd, GNU Mailutils, policyd-weight (their packages' strings)
  ['qpsmtpd HELO', 'HELO name is not fully qualified. Read RFC 2821', 'policy_block'],
  ['qpsmtpd bare LF', '421 See http://smtpd.develooper.com/barelf.html', 'policy_block', 'another'],
  ['qpsmtpd karma', 'very bad karma: -5', 'spam_block'],
  [
    'ZoneMTA delay',
    "There was a temporary problem delivering your message to ann@example.net. Delivery will be retried. You'll be notified if the delivery fails permanently.",
    'expired',
  ],
  ['ZoneMTA connection', 'Connection to mx.example.net closed unexpectedly', 'system_error'],
  ['aiosmtpd size', '552 Error: Too much mail data', 'message_too_large', 'another'],
  ['Mailutils quota', 'ann@example.net: message would exceed maximum mailbox size for this recipient', 'mailbox_full'],
  [
    'policyd-weight DNS',
    '450 No DNS entries for your MTA, HELO and Domain. Contact YOUR administrator',
    'spam_block',
    'another',
  ],
  // fml (fmlorg/fml4 kern/fml.pl): RejectHandler's deny text, DupMessageIdP's loop alert
  ['fml not member', 'You are not a member of this mailing list <owls@lists.example.net>.', 'policy_block'],
  ['fml loop alert', 'Duplicated Message-ID is detected in <owls@lists.example.net>.', 'system_error'],
  // Wording found outside any bounce corpus (bench/bounce-phrase-sources.json): Domino's router error
  // table, old and new; Facebook's postmaster codes; Apache James's bounce; a WILLCOM quota refusal;
  // T-Online's reputation block; Gmail's null MX and NXDOMAIN notices.
  ['Domino no such user', 'User Ann Example (ann@example.net) not listed in Domino Directory', 'user_unknown'],
  ['Domino R5 no such user', 'User Ann Example not listed in public Name & Address Book', 'user_unknown'],
  [
    'Facebook RCP-P2',
    "550 RCP-P2 The attempted recipient's preferences prevent messages from being delivered.",
    'policy_block',
  ],
  ['James unknown host', 'Unknown host: mx.example.invalid', 'host_unknown'],
  [
    'WILLCOM quota',
    "552 We failed to deliver mail because the volume of recipient's mailbox exceeded the local limit.",
    'mailbox_full',
  ],
  [
    'T-Online reputation',
    '554 IP=192.0.2.1 - A problem occurred. (Ask your postmaster for help or to contact tosa@rx.example.net to clarify.) (BL)',
    'spam_block',
  ],
  [
    'Gmail null MX',
    "The domain example.com doesn't receive email according to the administrator: returned Null MX",
    'host_unknown',
  ],
  [
    'Gmail NXDOMAIN',
    "DNS Error: DNS type 'mx' lookup of example.invalid responded with code NXDOMAIN Domain name not found",
    'host_unknown',
  ],
  // Mail servers' own refusals (fifth round of documented refusals): Gromox, Citadel, XMail, Kolab, MailEnable,
  // SmarterMail, Modoboa, iRedAPD, T-Online, Mail.ru, Orange, LogSat
  ['Gromox mailbox full', '452 Mailbox <ann@example.net> is full', 'mailbox_full', 'another'],
  ['Gromox transactions', '554 Too many MAIL transactions in the same connection', 'rate_limited', 'another'],
  ['Citadel login', '550 You must log in to send mail from example.com', 'policy_block', 'another'],
  ['Citadel internal', '550 Internal delivery error', 'system_error', 'another'],
  ['XMail sender domain', '505 Your domain has not DNS/MX entries', 'policy_block'],
  [
    'Kolab sender rule',
    '554 5.7.1 <DATA>: Data command rejected: Sender bob@example.org is not allowed to send to recipient ann@example.com',
    'policy_block',
  ],
  [
    'MailEnable address map',
    'Domain for ([SMTP:ann@example.com]) is locally serviced, but recipient is not defined in address map',
    'user_unknown',
  ],
  [
    'SmarterMail domain storage',
    'Failed Recipient: ann@example.com Reason: The domain size limit has been exceeded',
    'mailbox_full',
  ],
  ['SmarterMail attempts', 'Failed four Attempts to connect to recipients mail server', 'expired'],
  [
    'Modoboa daily limit',
    '450 4.7.1 <ann@example.net>: Recipient address rejected: Daily limit reached, retry later',
    'rate_limited',
    'another',
  ],
  [
    'iRedAPD message size',
    '554 5.7.1 <END-OF-MESSAGE>: End-of-data rejected: Message size exceed (maybe caused by big attachment file)',
    'message_too_large',
    'another',
  ],
  ['T-Online send quota', '550 Send quota exceeded', 'rate_limited', 'another'],
  [
    'Mail.ru terminated',
    '550 Message was not accepted -- invalid mailbox. Local mailbox ann@example.net is unavailable: user is terminated',
    'account_disabled',
    'another',
  ],
  ['Orange invalid sender', '501 5.1.0 Emetteur invalide. Invalid Sender. OFR004_405 [405]', 'policy_block', 'another'],
  ['LogSat IP block', '421 Your IP is temporarily blocked, please try again later', 'spam_block', 'another'],
  // A delivery aborted within seconds is a refusal, not a queue timeout (a Tiscali 5.1.1 notice says so).
  [
    'aborted in seconds',
    'Delivery to the following recipients was aborted after 2 second(s): 550 5.1.1 user unknown',
    'user_unknown',
  ],
];

describe('documented refusals, by standard and vendor', () => {
  itReadsEach(DOCUMENTED);
});
