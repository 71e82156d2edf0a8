/**
 * The documented wording of the MTAs and mailbox providers, by family: each
 * line is the message (or its distinctive part) that the vendor's own
 * documentation or source gives for one refusal, cited above its table.
 * Tried before the generic English phrases of bounce-reasons.ts, which they
 * refine. Data only; every pattern bounded (no backtracking on hostile text).
 */
import type { ReasonTable } from './reason.js';
import { CONSUMER_MAIL_WORDING } from './vendor-consumer-mail.js';
import { EU_ISPS_WORDING } from './vendor-eu-isps.js';
import { GATEWAYS_WORDING } from './vendor-gateways.js';
import { HOSTING_WORDING } from './vendor-hosts.js';
import { RU_ASIA_WORDING } from './vendor-ru-asia.js';
import { US_ISPS_WORDING } from './vendor-us-isps.js';

/**
 * RFC 5321 §4.2.2-4.2.3: the reply texts the standard itself suggests. Only
 * those that name one reason ("mailbox unavailable" does not).
 */
const RFC_5321: ReasonTable = [
  ['mailbox_full', /exceeded storage allocation/i],
  ['user_unknown', /mailbox name not allowed/i],
  ['user_unknown', /user not local; please try/i],
  ['system_error', /local error in processing/i],
];

/**
 * Microsoft Exchange Server and Exchange Online: "Email non-delivery reports
 * and SMTP errors in Exchange Online" (learn.microsoft.com), the enhanced
 * status codes and component names of its NDRs.
 */
const MICROSOFT: ReasonTable = [
  ['user_unknown', /RESOLVER\.ADR\.(?:Ex)?Recip(?:ient)?NotFound|recipient not found by SMTP address lookup/i],
  ['message_too_large', /RESOLVER\.RST\.RecipSizeLimit|RecipSizeLimit/i],
  ['rate_limited', /RESOLVER\.ADR\.RecipLimit|RecipientRateLimitExceeded|submission quota exceeded/i],
  [
    'policy_block',
    /RESOLVER\.RST\.(?:AuthRequired|NotAuthorized)|TenantAttribution|not authenticated to send anonymous mail/i,
  ],
  // 4.3.2 "mailbox busy" with MapiExceptionMaxObjsExceeded: a folder of the mailbox holds as many items as it may.
  ['mailbox_full', /QuotaExceededException|STOREDRV\.Deliver\.Exception:Quota|MapiExceptionMaxObjsExceeded/i],
  // Any other failure of the mailbox store while delivering (a missing folder: MapiExceptionNotFound).
  ['system_error', /STOREDRV\.Deliver\.Exception:|failed to process message due to a permanent exception/i],
  ['system_error', /hop count exceeded/i],
  // 5.1.8 "bad outbound sender": the sending account is blocked for the spam it sent (often once taken over);
  // 5.2.1 from the Content Filter agent: the anti-spam filter quarantined the message.
  [
    'spam_block',
    /banned sending IP|banned sender|traffic not accepted from this IP|bad outbound sender|Content Filter agent quarantined/i,
  ],
  // 4.7.500-4.7.699 "Access denied, please try again later": Exchange Online throttles a sending IP whose volume jumped.
  ['rate_limited', /\b4\.7\.[56]\d\d\b[^\n]{0,10}Access denied, please try again later/i],
  ['policy_block', /does not pass DMARC verification|unregistered domains?|not in allowed-senders list/i],
  // 5.7.705: a tenant blocked for the spam it sent; 5.7.510: a domain that takes no mail over IPv6.
  ['spam_block', /tenant has exceeded threshold/i],
  ['policy_block', /does not accept email over IPv6/i],
  // 5.2.121, 5.2.122 and 5.1.90: the recipient's hourly receive limits, the sender's daily recipient limit.
  ['rate_limited', /RecipientPerHourMessageReceiveLimit|daily limit for message recipients/i],
];

/** Google: "SMTP error reference" (Google Workspace Admin Help, support.google.com/a/answer/3726730). */
const GOOGLE: ReasonTable = [
  ['user_unknown', /email account that you tried to reach does not exist/i],
  ['account_disabled', /email account that you tried to reach is (?:disabled|inactive)/i],
  [
    'mailbox_full',
    /email account that you tried to reach is over quota|inbox is out of storage space|out of storage space/i,
  ],
  [
    'rate_limited',
    /receiving mail (?:at a rate that prevents additional messages|too quickly)|daily (?:user )?sending (?:quota|limit) exceeded/i,
  ],
  ['message_too_large', /exceeded Google's message size limits/i],
  [
    'spam_block',
    /unusual rate of unsolicited mail|likely unsolicited mail|very low reputation of the sending|does not have a PTR record/i,
  ],
  ['spam_block', /not authorized to send email directly to our servers/i],
  [
    'policy_block',
    /content presents a potential security issue|this (?:mail|message) is unauthenticated|fails to pass authentication checks/i,
  ],
  // Google Groups' one refusal notice ("the group you tried to contact may not exist, or you may not have
  // permission to post messages to the group"), in whichever language the group writes it: a link is not
  // translated, and the notice sends the sender to the Groups help center (groups.google.com/support,
  // as pasted in github.com/USCiLab/cereal/issues/305 and openopps/openopps-platform/issues/1384; a
  // Workspace group's help topic 25838, as in OpenHunting/openhunt/issues/39).
  ['policy_block', /\bgroups\.google\.com\/support\b|\/bin\/topic\.py\?topic=25838\b/i],
];

/** Yahoo: "SMTP error codes" (Sender Hub, senders.yahooinc.com), codes in brackets. */
const YAHOO: ReasonTable = [
  ['user_unknown', /doesn'?t have a (?:yahoo|ymail|aol)\.[a-z.]{2,10} account/i],
  ['account_disabled', /this (?:mailbox|account) (?:is|has been) disabled/i],
  ['spam_block', /\[(?:TS0[1-4]|TSS0[4-9]|TSS1[01]|BL2[1-3]|RL0[12])\]/],
  ['policy_block', /\[PH01\]|not accepted for policy reasons/i],
  ['rate_limited', /max message per connection reached/i],
];

/** Amazon SES: "Amazon SES notification contents" and its suppression list (docs.aws.amazon.com/ses). */
const AMAZON_SES: ReasonTable = [
  [
    'user_unknown',
    /suppressed sending to this address because it has a recent history of bouncing|on the suppression list for your account/i,
  ],
  // The notification's bounceSubType, as the parser passes it on when a recipient has no diagnostic of its own.
  ['user_unknown', /SES bounceSubType: (?:NoEmail|Suppressed|OnAccountSuppressionList)\b/],
  ['mailbox_full', /SES bounceSubType: MailboxFull\b/],
  ['message_too_large', /SES bounceSubType: MessageTooLarge\b/],
  ['policy_block', /SES bounceSubType: (?:ContentRejected|AttachmentRejected)\b/],
];

/** Postfix: smtpd(8) access restrictions, local(8), virtual(8), pipe(8) (postfix.org documentation). */
const POSTFIX: ReasonTable = [
  ['user_unknown', /user unknown in (?:local recipient|virtual (?:alias|mailbox)|relay recipient) table/i],
  ['spam_block', /cannot find your (?:reverse )?hostname/i],
  ['policy_block', /helo command rejected/i],
  ['system_error', /command died with status|mail for \S{1,255} loops back to myself/i],
];

/** Exim: "The Exim specification", chapter on delivery errors and bounce messages. */
const EXIM: ReasonTable = [
  ['system_error', /suspected mail loop|host lookup did not complete|closed connection in response to/i],
  ['policy_block', /message has lines too long for transport/i],
  // The message of an ACL "deny" that gives none of its own (the ACL chapter's default).
  ['policy_block', /administrative prohibition/i],
];

/** qmail: qmail-remote(8) and qmail-local(8) messages (cr.yp.to), with their "(#x.y.z)" codes. */
const QMAIL: ReasonTable = [
  ['user_unknown', /no mailbox here by that name|this address no longer accepts mail/i],
  ['host_unknown', /couldn'?t find any host (?:named|by that name)|couldn'?t find a mail exchanger or IP address/i],
  ['system_error', /but greeting failed/i],
  ['policy_block', /but sender was rejected/i],
  // "I wasn't able to establish an SMTP connection. (#4.4.1)" is left to its status (a network
  // failure) and, followed by "this message has been in the queue too long", to the generic
  // expiry phrases: qmail-send gave up because the queue lifetime ran out.
];

/** Sendmail: its DSN and "Returned mail" texts (sendmail's Installation and Operation Guide). */
const SENDMAIL: ReasonTable = [
  ['expired', /(?:cannot|could not) send message (?:for|within) (?:the )?(?:past )?\d{1,3} (?:hours?|days?)/i],
];

/** fml, the mailing-list manager: its notices in kern/fml.pl (fmlorg/fml4), RejectHandler and DupMessageIdP. */
const FML: ReasonTable = [
  ['policy_block', /are not member \(|not a member of this mailing list/i],
  // A post whose Message-ID the list has already seen is dropped as a mail loop, not for its address.
  ['system_error', /duplicated message-id (?:is detected )?in </i],
];

/** Every family's wording, in one table for bounce-classify.ts (families do not overlap). */
export const VENDOR_PHRASES: ReasonTable = [
  ...RFC_5321,
  ...MICROSOFT,
  ...GOOGLE,
  ...YAHOO,
  ...AMAZON_SES,
  ...POSTFIX,
  ...EXIM,
  ...QMAIL,
  ...SENDMAIL,
  ...FML,
  ...US_ISPS_WORDING,
  ...EU_ISPS_WORDING,
  ...HOSTING_WORDING,
  ...CONSUMER_MAIL_WORDING,
  ...RU_ASIA_WORDING,
  ...GATEWAYS_WORDING,
];

/**
 * All the families' wording in one pattern, tried first: most texts carry none of it, and one scan
 * of a long text costs less than one per phrase (a superset: case folded for every phrase).
 */
export const ANY_VENDOR_PHRASE: RegExp = new RegExp(
  VENDOR_PHRASES.map(([, pattern]) => `(?:${pattern.source})`).join('|'),
  'i',
);
