/**
 * The documented refusal codes of the US consumer ISPs (Cox, Spectrum/Charter, Comcast/Xfinity, EarthLink, AT&T), for
 * bounce-vendor-wording.ts: each receiver puts a code of its own in its SMTP reply and explains it on its
 * postmaster pages, cited above each family. The codes are matched as tokens (bounded, case kept), the
 * meanings are ours. Data only; every pattern bounded (no backtracking on hostile text).
 */
import type { ReasonTable } from './reason.js';

/**
 * Cox: "Error Codes" (postmaster.cox.net/confluence/display/postmaster/Error+Codes, and its successor
 * www.cox.com/residential/support/email-error-codes.html, linked from
 * www.cox.com/business/support/cox-postmaster-administration.html). The reply ends in "AUP#<code>".
 */
const COX: ReasonTable = [
  // CXBL: the connecting IP is blocked for spam-like traffic; CDRBL: the same for at most a day;
  // CXDNS: the connecting IP's reverse DNS does not resolve (the host's standing, as RFC 7372's x.7.25).
  ['spam_block', /AUP#(?:CXBL|CDRBL|CXDNS)\b/],
  // IPBLnnnn: the IP is on one or more of the DNSBLs Cox consults (one bit a list);
  // URLBLnnn: a link in the body is on a domain blocklist.
  ['spam_block', /\bIPBL[01]{4,5}\b|\bURLBL[01]{3,4}\b/],
  // CXTHRT, CXMJ: the sending Cox account is held back after activity that looks like a takeover.
  ['spam_block', /AUP#CX(?:THRT|MJ)\b/],
  // CXSNDR: the sender's domain failed its SPF/DKIM checks or has no A/MX record;
  // CXSMTP: the session broke the protocol, so the sender could not be trusted.
  ['policy_block', /AUP#CX(?:SNDR|SMTP)\b/],
  // CXCNCT: too many simultaneous connections from one IP; CXMXRT: too many recipients or messages for now.
  ['rate_limited', /AUP#CX(?:CNCT|MXRT)\b/],
];

/**
 * Spectrum (Charter, Time Warner Cable, Bright House, Roadrunner): "Understanding Email Error Codes"
 * (www.spectrumbusiness.net/support/internet/understanding-email-error-codes, also on
 * www.spectrum.net/support/internet/understanding-email-error-codes). The reply ends in "AUP#I-nnnn"
 * (mail coming in), "AUP#O-nnnn" (going out), also written "AUP#In-", "AUP#Out-" or bare "AUP#nnnn".
 * That page could not be read here: its codes and their meanings were read from Sisimai's
 * transcription of it (sisimai/p5-sisimai, lib/Sisimai/Rhost/Spectrum.pm); the categories are ours.
 */
const SPECTRUM_CODE = String.raw`AUP#(?:In?|O(?:ut)?)?-?`;
const SPECTRUM: ReasonTable = [
  // 1000: the IP is blocked for suspicious traffic; 1010-1080: the sending address is blocked or held
  // back for it; 1100-1150: the IP has no forward-confirmed reverse DNS; 1200-1250: the IP is on
  // Cloudmark's or Spamhaus's list.
  ['spam_block', new RegExp(String.raw`${SPECTRUM_CODE}1(?:0[0-8]|1[0-5]|2[0-5])0\b`)],
  // 1090: the message could not be handled just now.
  ['system_error', new RegExp(String.raw`${SPECTRUM_CODE}1090\b`)],
  // 1160-1190: against the sending domain's own published policy; 1260: IPv6 senders are not served;
  // 1500, 1520: sent as an address other than the signed-in one or a hosted domain; 1560: too many
  // invalid recipients in one message.
  ['policy_block', new RegExp(String.raw`${SPECTRUM_CODE}1(?:1[6-9]|26|5[026])0\b`)],
  // 1300-1340: too many connections; 1350-1490: message, recipient and spam-potential limits;
  // 1540, 1550, 1580: too many messages a session, recipients a message, or recipients for now.
  ['rate_limited', new RegExp(String.raw`${SPECTRUM_CODE}1(?:[34]\d|5[458])0\b`)],
  // 1530: over the 20 MB message size limit.
  ['message_too_large', new RegExp(String.raw`${SPECTRUM_CODE}1530\b`)],
];

/**
 * Comcast / Xfinity: "Mail delivery error codes" (postmaster.comcast.net/mail-error-codes.html, now
 * www.xfinity.com/support/articles/email-errors; the replies link postmaster.comcast.net/smtp-error-codes.php#<code>),
 * with the older short codes of security.comcast.net/get-help/Mail-Delivery-Error-Messages.aspx and
 * business.comcast.com/help-and-support/internet/email-bounce-back-messages/.
 */
const COMCAST: ReasonTable = [
  // BL000000: traffic with spam patterns; BL000001-BL000111: the IP is on Spamhaus ZEN, Cloudmark CSI
  // and/or SenderScore (one bit a list); BL004, BL006, BL007: the older codes for the same.
  ['spam_block', /\bBL000[01]{3}\b|\bBL00[467]\b/],
  // ES000001, ES000010: direct delivery from dynamic or residential address space.
  ['spam_block', /\bES0000(?:01|10)\b/],
  // RLnnnnnn (and the older RL001): the sender is throttled for volume or connections.
  ['rate_limited', /\bRL(?:000\d{3}|001)\b/],
  // Its uncoded replies ("550 5.1.1 Not our customer", "Too many sessions opened") need no rule here:
  // the status and the generic phrases already read them (the tests hold them to it).
];

/**
 * EarthLink (its inbound mail filtered by Vade): "Inbound error codes"
 * (https://postmaster-earthlink.vadesecure.com/inbound_error_codes); each refusal carries an ELNK_nnn
 * code. Only the codes whose meaning was read there are listed.
 */
const EARTHLINK: ReasonTable = [
  // ELNK_101: the sending IP is on a list of IPs sending spam, malware or phishing;
  // ELNK_105: the sending IP's reverse DNS (PTR) is missing or does not fit.
  ['spam_block', /\bELNK_10[15]\b/],
  // ELNK_110: the sending IP holds more concurrent connections than allowed.
  ['rate_limited', /\bELNK_110\b/],
  // ELNK_103: the receiving server is out of service for now.
  ['system_error', /\bELNK_103\b/],
];

/**
 * AT&T (att.net, bellsouth.net, sbcglobal.net): "Block/Error Messages" (http://rbl.att.net/block_enduser.html)
 * and the BellSouth postmaster's "net" errors (http://www.postmaster.bellsouth.net/error.htm).
 */
const ATT: ReasonTable = [
  // "421-failure in DNS look-up": the sending IP has no valid reverse DNS (PTR) entry.
  ['spam_block', /\bfailure in DNS look-?up\b/i],
];

export const US_ISPS_WORDING: ReasonTable = [...COX, ...SPECTRUM, ...COMCAST, ...EARTHLINK, ...ATT];
