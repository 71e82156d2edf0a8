/**
 * The documented rejection codes of European mailbox providers and of Mimecast, for
 * bounce-vendor-wording.ts: the vendors' own code tokens (a URL parameter, an "OFR" code, a
 * bracketed tag) and a few short texts that only they write. Descriptions are ours.
 * Data only; every pattern bounded (no backtracking on hostile text).
 */
import type { ReasonTable } from './reason.js';

/** A United Internet postmaster or sender-guidelines link (GMX, WEB.DE, mail.com) up to its `c=` parameter. */
const UI_LINK = String.raw`(?:gmx\.(?:net|com|de|at|ch)|web\.de|mail\.com)\/[\w\/.-]{0,40}\?[\w=&.%:-]{0,120}?\bc=`;

/**
 * GMX, WEB.DE and mail.com (United Internet): "Error messages" on their postmaster sites,
 * https://postmaster.gmx.com/en/error-messages, https://postmaster.web.de/error-messages and
 * https://postmaster.mail.com/en/error-messages. A refusal names its case in the `c=` parameter of
 * the link it gives (its last line) and carries no enhanced status.
 */
const UNITED_INTERNET: ReasonTable = [
  // c=r0201: the sending IP is on the block list; c=rdns: the sending IP has no usable reverse DNS name.
  ['spam_block', new RegExp(String.raw`${UI_LINK}(?:r0201|rdns)\b|\bIP address is (?:block|black) listed\b`, 'i')],
  // c=hi: a header that breaks RFC 5322 (a malformed or repeated Date, From, Sender, To, Subject...).
  ['policy_block', new RegExp(String.raw`${UI_LINK}hi\b`, 'i')],
  // The SPF check failed: the sending server is not one the domain's owner allows.
  ['policy_block', /\bReject due to SPF policy\b/i],
  // Delivery suspended for a while for breaking the email policy.
  ['policy_block', /\bReject due to policy violations\b/i],
  // Too much mail from the sender in a short time.
  ['rate_limited', /\bRate limit reached\. Please try again later\b/i],
  // A temporary refusal while the receiving system is overloaded.
  ['system_error', /\bAdministrative reject\b/i],
];

/**
 * Orange / Wanadoo (France): the "OFR" codes of the Orange postmaster, https://postmaster.orange.fr
 * (meanings as also listed by https://bentonow.com/smtp-errors/orange). The code closes the reply,
 * e.g. "OFR004_104 [104]".
 */
const ORANGE: ReasonTable = [
  // OFR004_104: too many simultaneous connections from the sending IP.
  ['rate_limited', /\bOFR004_104\b/],
  // OFR_999: the sending IP is suspended for some hours after earlier breaches (reputation).
  ['spam_block', /\bOFR_999\b/],
];

/**
 * Deutsche Telekom (T-Online): https://postmaster.t-online.de ("IP-Troubleshooting", refused
 * SMTP connections). A refused IP is told to write to an rx.t-online.de address; the tag at
 * the end says why: (BL) a block of the IP, (NOWL) an IP with no or a bad reputation.
 */
const T_ONLINE: ReasonTable = [
  ['spam_block', /rx\.t-online\.de\b[^\n]{0,40}\((?:BL|NOWL)\)|\bNone\/bad reputation\b/i],
];

/**
 * Mimecast: "Mimecast SMTP Error Codes" (https://mimecastsupport.zendesk.com/hc/en-us/articles/34000709564691-Policies-Mimecast-SMTP-Error-Codes,
 * formerly https://community.mimecast.com/docs/DOC-1369) and "Managing Blocked Senders and Email
 * Rejections" (https://mimecastsupport.zendesk.com/hc/en-us/articles/42979092709907).
 */
const MIMECAST: ReasonTable = [
  // The recipient is not a known address of the customer.
  [
    'user_unknown',
    /\bInvalid Recipient\b[^\n]{0,6}https?:\/\/(?:community\.mimecast\.com|mimecastsupport\.zendesk\.com)/i,
  ],
  // Blocked by the customer's or a user's blocked-senders entries, anti-spoofing or security policies, or relaying.
  [
    'policy_block',
    /\bEnvelope blocked - User (?:Domain )?Entry\b|\benvelope blocked - https?:\/\/community\.mimecast|\bRejected by header based (?:manually )?Blocked Senders\b|\bRejected by header based Anti-Spoofing policy\b|\bPolicy level block list in force\b|\bEmail rejected due to security policies\b|\bOpen relay not allowed\b|\bSender address blocked\b/i,
  ],
  // Mimecast's own reputation lists, or an IP blacklisted for a while.
  ['spam_block', /\b[a-z]{2,12}\.mimecast\.org (?:Blocked|Poor Reputation Sender)\b|\bIP temporarily blacklisted\b/i],
  // Left to the codes: 451 "Internal resources temporarily unavailable", which Mimecast gives for
  // greylisting as well as for a sender IP's reputation (no one reason).
  // The Mimecast server is at its maximum load.
  ['system_error', /\bUnable to process connection at this time\b/i],
];

/**
 * Sophos Email (its gateway's refusals): "SMTP error codes"
 * (https://docs.sophos.com/central/customer/help/en-us/ManageYourProducts/EmailSecurity/SMTPErrorCodes/index.html);
 * each refusal carries an XGEMAIL_nnnn code.
 */
const SOPHOS: ReasonTable = [
  // 0004: the sending IP failed an RBL test; 0005: the sender's domain failed a DBL (domain block list) test.
  ['spam_block', /\bXGEMAIL_000[45]\b/],
  // 0002, 0003: SPF or DMARC failed; 0006: a TLS version other than the policy's; 0008: the domain, IP
  // or address is on the customer's own block list.
  ['policy_block', /\bXGEMAIL_000[2368]\b/],
  // 0011: no such recipient in the protected domain.
  ['user_unknown', /\bXGEMAIL_0011\b/],
  // 0012: larger than allowed.
  ['message_too_large', /\bXGEMAIL_0012\b/],
  // 0014: over the recipient's inbound rate limit for one sender.
  ['rate_limited', /\bXGEMAIL_0014\b/],
];

export const EU_ISPS_WORDING: ReasonTable = [...UNITED_INTERNET, ...ORANGE, ...T_ONLINE, ...MIMECAST, ...SOPHOS];
