/**
 * The documented refusal wording of mail filters, blocklists, hosting control panels and
 * the policy servers of mail suites, for bounce-vendor-wording.ts: each line matches a
 * vendor's own code token or a phrase only that vendor writes, cited above its block.
 * Data only; every pattern bounded (no backtracking on hostile text).
 *
 * Left out: IONOS's "Reject due to policy violations", which its help page explains as a block of
 * the sending IP for a poor delivery rate (a reputation verdict), while its sister brands GMX,
 * WEB.DE and mail.com document the same words as a breach of their email policy
 * (bounce-vendor-eu-isps.ts): one wording, two meanings, so the policy reading stays.
 */
import type { ReasonTable } from './reason.js';

/**
 * Trend Micro Email Reputation Services: a receiving server that asks ERS names the list the
 * sending IP is on (ERS-DUL, dynamic addresses; ERS-QIL, the quick IP list of current spam
 * sources; ERS-RBL, the standard reputation list): "Mail from <192.0.2.1> was refused due to the
 * sender IP found in ERS-DUL. For details, query the IP reputation ..." (as pasted in
 * github.com/thunderbird/mailstrom/issues/197; "Recipient address rejected: ERS-QIL." in
 * server-recipe.com/3851 and a Virgin Media community thread).
 */
const TREND_MICRO: ReasonTable = [['spam_block', /\bERS-(?:DUL|QIL|RBL)\b/]];

/**
 * Proofpoint (its hosted gateways, pphosted.com, and the MX of iCloud Mail): a sending IP that its
 * Dynamic Reputation blocks is refused with "550 5.7.0 Blocked - see
 * https://ipcheck.proofpoint.com/?ip=192.0.2.1", the link to its IP reputation look-up and delisting
 * form: the sending host's standing, at whatever SMTP phase (as pasted in
 * github.com/LukeSmithxyz/emailwiz/issues/233; the older support.proofpoint.com/dnsbl-lookup.cgi
 * link, in docker-mailserver/docker-mailserver/issues/22 and zone-eu/zone-mta/issues/301, the
 * generic "dnsbl" already reads).
 */
const PROOFPOINT: ReasonTable = [['spam_block', /\bipcheck\.proofpoint\.com\//i]];

/**
 * Spamhaus: a blocklist answer of 127.255.255.254 ("Error: open resolver", with a
 * spamhaus.org/returnc/ link) says the receiving server queried through a public resolver, which
 * Spamhaus refuses: the receiver's DNS set-up failed, no verdict on the sender (the linked
 * "returnc" pages; replies pasted in springcomp/self-hosted-simplelogin#37 and
 * openstreetmap/operations#674).
 */
const SPAMHAUS: ReasonTable = [['system_error', /\bError: open resolver\b|spamhaus\.org\/returnc\//i]];

/**
 * EveryCloud (antispameurope) "Workspace classification codes"
 * (support.everycloud.com, article 4000007755): 5.5.6, a message that passed its filter more
 * than ten times ("Loop detection > 10 mal"). MailCleaner's Exim stage 1
 * (MailCleaner/MailCleaner, etc/exim/exim_stage1.conf_template): a sender on the
 * administrators' block list ("blacklisted sender: ..."), a rule, not a spam score.
 */
const FILTERS: ReasonTable = [
  ['system_error', /loop detection > ?\d{1,3}\b/i],
  ['policy_block', /\bblacklisted sender: /i],
];

/**
 * Hosting control panels' outgoing limits and suspensions, said to the sending user: cPanel's
 * "Domain example.com has exceeded the max emails per hour" and "... max defers and failures
 * per hour" (forums.cpanel.net thread 697029; my.maxer.com KB 226); DirectAdmin's Exim
 * configuration (custombuild exim.pl, "You (user) have reached your daily email limit of 200
 * emails"; exim.strings.conf, DOMAIN_SUSPENDED "The domain ... is currently suspended");
 * Plesk's outgoing message limits ("The limit on the number of allowed outgoing messages was
 * exceeded", support.plesk.com article 213389069).
 */
const CONTROL_PANELS: ReasonTable = [
  ['rate_limited', /exceeded the max (?:emails|defers and failures) per hour/i],
  ['rate_limited', /reached your daily email limit|limit on the number of allowed outgoing messages/i],
  ['account_disabled', /\bdomain \S{1,255} is currently suspended/i],
];

/**
 * iRedAPD, iRedMail's policy server (iredmail/iRedAPD, libs/__init__.py): its throttling
 * replies "Quota exceeded (number of mails in total)" (a sender's message count for the
 * period) and "Quota exceeded (size of single mail message)" (one message over the size
 * the period allows), neither about a mailbox's storage.
 */
const IREDAPD: ReasonTable = [
  ['rate_limited', /quota exceeded \(number of mails/i],
  ['message_too_large', /quota exceeded \(size of single mail message\)/i],
];

export const GATEWAYS_WORDING: ReasonTable = [
  ...TREND_MICRO,
  ...PROOFPOINT,
  ...SPAMHAUS,
  ...FILTERS,
  ...CONTROL_PANELS,
  ...IREDAPD,
];
