/**
 * What an enhanced status code (RFC 3463, and the IANA "SMTP Enhanced Status
 * Codes" registry of RFC 5248) and a bare reply code (RFC 5321 §4.2) say about
 * why a delivery failed. Written from those documents, not from sample bounces.
 * Pure data and two look-ups; core/bounce/classify.ts decides when to use them.
 */
import type { BounceReason } from './reason.js';

/**
 * One registered status detail: the reason it names and whether it names it
 * whatever the text says (`decides`). A detail that is a catch-all (x.0,
 * "other or undefined") or that servers use for several refusals (5.7.1
 * "delivery not authorized", spam and policy alike) leaves the reason to the
 * wording and gives its own only when the wording says nothing.
 */
export interface StatusMeaning {
  reason: BounceReason;
  decides: boolean;
}

const d = (reason: BounceReason): StatusMeaning => ({ reason, decides: true });
const fallback = (reason: BounceReason): StatusMeaning => ({ reason, decides: false });

/** `subject.detail` (class left out: the same detail means the same in 4.x.x and 5.x.x, RFC 3463 §3). */
export const STATUS_DETAILS: ReadonlyMap<string, StatusMeaning> = new Map([
  // X.1 addressing status (RFC 3463 §3.2)
  ['1.0', fallback('user_unknown')], // other address status
  ['1.1', d('user_unknown')], // bad destination mailbox address
  ['1.2', d('host_unknown')], // bad destination system address
  ['1.3', d('user_unknown')], // bad destination mailbox address syntax
  ['1.4', d('user_unknown')], // destination mailbox address ambiguous
  ['1.6', d('user_unknown')], // destination mailbox has moved, no forwarding address
  ['1.7', d('policy_block')], // bad sender's mailbox address syntax: the sender's problem
  ['1.8', d('policy_block')], // bad sender's system address
  ['1.9', fallback('system_error')], // message relayed to non-compliant mailer (RFC 3886)
  // Recipient address has null MX (RFC 7505); Exchange Online sends 5.1.10 for "RecipientNotFound"
  // (Microsoft's NDR reference), so the wording tells which.
  ['1.10', fallback('host_unknown')],
  // X.2 mailbox status (§3.3)
  ['2.0', fallback('account_disabled')], // other or undefined mailbox status
  ['2.1', fallback('account_disabled')], // mailbox disabled, not accepting messages (some servers send it for filtering too)
  ['2.2', d('mailbox_full')], // mailbox full
  ['2.3', d('message_too_large')], // message length exceeds administrative limit
  ['2.4', fallback('system_error')], // mailing list expansion problem
  // X.3 mail system status (§3.4)
  ['3.0', fallback('system_error')], // other or undefined mail system status
  ['3.1', fallback('system_error')], // mail system full (the system's storage, not the mailbox's)
  ['3.2', fallback('system_error')], // system not accepting network messages
  ['3.3', fallback('system_error')], // system not capable of selected features
  ['3.4', d('message_too_large')], // message too big for system
  ['3.5', fallback('system_error')], // system incorrectly configured
  ['3.6', fallback('system_error')], // requested priority was changed (RFC 6710)
  // X.4 network and routing status (§3.5)
  ['4.0', fallback('system_error')], // other or undefined network or routing status
  ['4.1', fallback('system_error')], // no answer from host
  ['4.2', fallback('system_error')], // bad connection
  ['4.3', fallback('system_error')], // directory server failure
  ['4.4', fallback('host_unknown')], // unable to route
  ['4.5', fallback('system_error')], // mail system congestion
  ['4.6', fallback('system_error')], // routing loop detected
  ['4.7', d('expired')], // delivery time expired
  // X.5 mail delivery protocol status (§3.6)
  ['5.0', fallback('system_error')], // other or undefined protocol status
  ['5.1', fallback('system_error')], // invalid command
  ['5.2', fallback('system_error')], // syntax error
  ['5.3', fallback('rate_limited')], // too many recipients
  ['5.4', fallback('system_error')], // invalid command arguments
  ['5.5', fallback('system_error')], // wrong protocol version
  ['5.6', fallback('system_error')], // authentication exchange line too long (RFC 4954)
  // X.6 message content or media status (§3.7): the server would not take this content
  ['6.0', fallback('policy_block')],
  ['6.1', fallback('policy_block')], // media not supported
  ['6.2', fallback('policy_block')], // conversion required and prohibited
  ['6.3', fallback('policy_block')], // conversion required but not supported
  ['6.4', fallback('policy_block')], // conversion with loss performed
  ['6.5', fallback('policy_block')], // conversion failed
  ['6.6', fallback('policy_block')], // message content not available (RFC 4468)
  ['6.7', fallback('policy_block')], // non-ASCII addresses not permitted (RFC 6531)
  ['6.8', fallback('policy_block')], // UTF-8 string reply required (RFC 6531)
  ['6.9', fallback('policy_block')], // UTF-8 header message cannot be transferred (RFC 6531)
  // X.7 security or policy status (§3.8, RFC 5248 registry): spam and policy share 7.0 and 7.1, the wording tells them apart
  ['7.0', fallback('policy_block')], // other or undefined security status
  ['7.1', fallback('policy_block')], // delivery not authorized, message refused
  ['7.2', d('policy_block')], // mailing list expansion prohibited
  ['7.3', d('policy_block')], // security conversion required but not possible
  ['7.4', d('policy_block')], // security features not supported
  // Cryptographic failure: the key was missing or invalid, which a DNS timeout fetching it also is; the words say which.
  ['7.5', fallback('policy_block')],
  ['7.6', d('policy_block')], // cryptographic algorithm not supported
  ['7.7', d('policy_block')], // message integrity failure
  ['7.8', d('policy_block')], // authentication credentials invalid (RFC 4954)
  ['7.9', d('policy_block')], // authentication mechanism is too weak (RFC 4954)
  ['7.10', d('policy_block')], // encryption needed (RFC 5248)
  ['7.11', d('policy_block')], // encryption required for requested authentication mechanism (RFC 4954)
  ['7.12', d('policy_block')], // a password transition is needed (RFC 4954)
  ['7.13', d('account_disabled')], // user account disabled (RFC 5248)
  ['7.14', d('policy_block')], // trust relationship required (RFC 5248)
  ['7.15', d('policy_block')], // priority level is too low (RFC 6710)
  ['7.16', d('message_too_large')], // message is too big for the specified priority (RFC 6710)
  ['7.17', d('user_unknown')], // mailbox owner has changed (RFC 7293)
  ['7.18', d('user_unknown')], // domain owner has changed (RFC 7293)
  ['7.19', d('policy_block')], // RRVS test cannot be completed (RFC 7293)
  ['7.20', d('policy_block')], // no passing DKIM signature found (RFC 7372)
  ['7.21', d('policy_block')], // no acceptable DKIM signature found (RFC 7372)
  ['7.22', d('policy_block')], // no valid author-matched DKIM signature found (RFC 7372)
  ['7.23', d('policy_block')], // SPF validation failed (RFC 7372)
  // SPF validation error (RFC 7372): evaluating SPF went wrong, as a broken record (the sender's) or a
  // DNS timeout (nobody's) does; the words say which.
  ['7.24', fallback('policy_block')],
  ['7.25', d('spam_block')], // reverse DNS validation failed (RFC 7372): the sending host's standing
  ['7.26', d('policy_block')], // multiple authentication checks failed (RFC 7372)
  ['7.27', d('host_unknown')], // sender address has null MX (RFC 7505)
  ['7.28', d('spam_block')], // mail flood detected (RFC 5248 registry)
  ['7.29', d('policy_block')], // ARC validation failure (RFC 8617)
  ['7.30', d('policy_block')], // REQUIRETLS support required (RFC 8689)
]);

/** What a subject says when its detail is not registered (RFC 3463 §2: an unknown detail reads as x.y.0). */
const SUBJECT_DEFAULTS: ReadonlyMap<string, BounceReason> = new Map([
  ['1', 'user_unknown'],
  ['2', 'account_disabled'],
  ['3', 'system_error'],
  ['4', 'system_error'],
  ['5', 'system_error'],
  ['6', 'policy_block'],
  ['7', 'policy_block'],
]);

/** The meaning of `c.s.d`; an unregistered detail (a vendor's own, 5.7.606) is its subject's catch-all. */
export function statusMeaning(status: string): StatusMeaning | null {
  const match = /^[245]\.(\d{1,3})\.(\d{1,3})$/.exec(status);
  if (match === null) return null;
  const [subject, detail] = [Number(match[1]), Number(match[2])];
  const registered = STATUS_DETAILS.get(`${subject}.${detail}`);
  if (registered !== undefined) return registered;
  const reason = SUBJECT_DEFAULTS.get(String(subject));
  return reason === undefined ? null : fallback(reason);
}

/**
 * Reply codes (RFC 5321 §4.2.2-4.2.3, RFC 4954 §6, RFC 7504) that name a
 * reason by themselves, and the reason a generic one stands for when nothing
 * else does. 550 and 554 are used for nearly every refusal; their RFC text
 * ("mailbox unavailable", "transaction failed") decides only in silence.
 */
export const REPLY_CODE_REASONS: ReadonlyMap<string, StatusMeaning> = new Map([
  ['421', fallback('system_error')], // service not available, closing transmission channel
  ['450', fallback('system_error')], // mailbox unavailable (busy, or temporarily blocked for policy reasons)
  ['451', fallback('system_error')], // local error in processing
  ['452', fallback('system_error')], // insufficient system storage (or too many recipients, §4.5.3.1.10)
  ['455', fallback('system_error')], // server unable to accommodate parameters
  ['500', fallback('system_error')], // syntax error, command unrecognized
  ['501', fallback('system_error')], // syntax error in parameters or arguments
  ['502', fallback('system_error')], // command not implemented
  ['503', fallback('system_error')], // bad sequence of commands
  ['504', fallback('system_error')], // command parameter not implemented
  ['521', d('host_unknown')], // host does not accept mail (RFC 7504)
  ['530', d('policy_block')], // authentication required (RFC 4954)
  ['534', d('policy_block')], // authentication mechanism is too weak (RFC 4954)
  ['535', d('policy_block')], // authentication credentials invalid (RFC 4954)
  ['538', d('policy_block')], // encryption required for requested authentication mechanism (RFC 4954)
  ['550', fallback('user_unknown')], // mailbox unavailable (e.g., mailbox not found, no access)
  ['551', fallback('user_unknown')], // user not local
  ['552', fallback('mailbox_full')], // exceeded storage allocation
  ['553', fallback('user_unknown')], // mailbox name not allowed
  ['554', fallback('policy_block')], // transaction failed (in practice: refused on the server's rules)
  ['555', fallback('system_error')], // MAIL FROM/RCPT TO parameters not recognized or not implemented
  ['556', d('host_unknown')], // domain does not accept mail (RFC 7504)
]);
