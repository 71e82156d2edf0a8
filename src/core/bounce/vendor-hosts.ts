/**
 * The documented refusal codes and wording of hosting and mailbox providers, for
 * bounce-vendor-wording.ts: each line matches a vendor's own code token (or, failing
 * one, a short phrase only that vendor writes), cited above its block. Data only;
 * every pattern bounded (no backtracking on hostile text).
 *
 * Left out: Apple iCloud Mail. Its refusals carry bracketed codes ([CS01], [HM08]) and point
 * to "Postmaster information for iCloud Mail" (support.apple.com/en-us/102322, formerly
 * HT204137), but that page gives best practices only and documents no code's meaning.
 */
import type { ReasonTable } from './reason.js';

/**
 * GoDaddy (Workspace Email and cPanel mail, *.secureserver.net): "Fix rejected email with a
 * bounce error" (https://www.godaddy.com/help/fix-rejected-email-with-a-bounce-error-40685;
 * also at sg.godaddy.com and help-center.dc-aws.godaddy.com), whose refusals end in an "IB"
 * code. No "OB" (outbound) code is documented there or elsewhere that could be found. The stored
 * copies of that page end before its table of codes: the codes and their meanings were read from
 * Sisimai's transcription of it (sisimai/rb-sisimai, lib/sisimai/rhost/godaddy.rb); the categories
 * are ours.
 */
const GODADDY: ReasonTable = [
  // IB103: sending IP has a poor Cloudmark reputation; IB104/IB105/IB106: listed on Spamhaus SBL/XBL/PBL;
  // IB108: no reverse DNS for the sending IP; IB110/IB111: IP blocked (an hour, a day) after sending
  // too much spam; IB112/IB113: likewise after mailing too many invalid recipients; IB212: spam content.
  ['spam_block', /\bIB(?:10[3-68]|11[0-3]|212)\b/],
  // IB007: too many concurrent sessions from the IP; IB504: too many messages from the IP this hour;
  // IB510: too many messages in one session; IB605: too many recipients on one message;
  // IB607: too many recipients from the IP this hour.
  ['rate_limited', /\bIB(?:007|504|510|60[57])\b/],
  // IB401: authenticating on the inbound servers (a client set up with the wrong SMTP server);
  // IB501/IB502: an empty From, or an IP address as the From; IB506: a From domain with no usable
  // DNS; IB508: the sender domain's SPF does not allow the sending server; IB705: a virus found.
  ['policy_block', /\bIB(?:401|50[1268]|705)\b/],
  // IB101: GoDaddy's own queue is over its normal load, the refusal is temporary.
  ['system_error', /\bIB101\b/],
];

/**
 * Zoho: "SMTP Error Codes" of Zoho's sending service (ZeptoMail, the Zoho Mail platform;
 * https://www.zoho.com/zeptomail/help/api/smtp-error-codes.html). Only the messages that no
 * other server writes: a plain "Authentication Failed" or STARTTLS demand is left to the codes.
 */
const ZOHO: ReasonTable = [
  // A virus found in the message, reported under Zoho Mail's name.
  ['policy_block', /\bdetected by Zoho Mail\b/i],
  // A message without a subject, which Zoho will not send; a From address whose domain it may not relay for.
  ['policy_block', /\bsubject is mandatory\b|\brelaying disallowed as\b/i],
  // The message (its attachments) is over the size the account's policy allows.
  ['message_too_large', /\bemail size exceeded the policy\b/i],
];

/**
 * Tencent QQ Mail and Tencent Exmail (mx*.qq.com): the help pages their refusals link to,
 * https://service.mail.qq.com/cgi-bin/help?subtype=1&&id=20022&&no=1000725 (and no=1000723,
 * 1000726, 1000728, 1000730; the same pages under service.exmail.qq.com). The pages' own
 * numbers are the codes; the refusal names its limit in English.
 */
const TENCENT: ReasonTable = [
  // no=1000723 and no=1000725: the sender, its domain, the connecting IP (or its connections) sent more
  // than Tencent's per-minute, hourly or daily limit; refused for a while.
  ['rate_limited', /\b(?:ip|connection|domain|sender) frequency limited\b|\bid=20022&{1,2}no=100072[35]\b/i],
  // The recipient got too many messages in a short time, so mail to it is held off for now (the
  // phrase is close to RFC 5321's, so only as Tencent writes it, with its bracketed trace token).
  ['rate_limited', /\bmailbox unavailable or access denied \[/i],
  // no=1000726: bulk content that many users reported as spam.
  ['spam_block', /\bmail content denied\b|\bid=20022&{1,2}no=1000726\b/i],
  // no=1000728: no such recipient; no=1000730: the recipient address is malformed.
  ['user_unknown', /\bid=20022&{1,2}no=10007(?:28|30)\b/],
];

export const HOSTING_WORDING: ReasonTable = [...GODADDY, ...ZOHO, ...TENCENT];
