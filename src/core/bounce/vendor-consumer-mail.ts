/**
 * The documented refusal codes of consumer mailbox providers that the MICROSOFT and YAHOO blocks
 * of bounce-vendor-wording.ts do not cover, for bounce-vendor-wording.ts: Microsoft's consumer
 * mail (Outlook.com, Hotmail, Live, MSN), the legacy AOL mail servers (before Yahoo took over
 * AOL's filtering) and Facebook's former mail service. Each line matches the vendor's own code token, never its prose; the meanings
 * are summarised in our words and the categories are ours. Data only; every pattern bounded (no
 * backtracking on hostile text).
 *
 * Left out, for want of any documented meaning: Outlook.com's other "(Sxxxx)" and "(ASnnn)"
 * tokens, such as (S3114) and (AS843), internal troubleshooting codes to Microsoft; RP-002, RP-003;
 * AOL's RLY:B3, RLY:NW, RLY:SC, DYN:T1, DNS:RR and any MLR code (seen in replies, explained nowhere found).
 */
import type { ReasonTable } from './reason.js';

/**
 * Microsoft consumer mail: the "SMTP errors" of the Outlook.com postmaster troubleshooting page
 * (https://sendersupport.olc.protection.outlook.com/pm/troubleshooting.aspx, formerly
 * http://postmaster.live.com and http://mail.live.com/mail/troubleshooting.aspx#errors, the
 * address the refusals themselves give). No stored copy of that page could be read here, so the
 * meaning of each code was taken from second-hand quotations of it: the Hotmail replies and page
 * entries quoted at https://www.mydigitallife.net/how-to-remove-server-ip-address-from-msn-hotmail-block-blacklist/
 * (SC-001, SC-004), https://foxpa.ws/e-mails-to-hotmail-bounce-550-sc-001-part-of-your-network-is-on-our-block-list
 * (SC-001), http://intranoggin.com/Blog/April-2008/HotMail-Delivery-Status-Notification-(Failure).aspx
 * (DY-001) and https://www.postmastery.com/hotmail-throttling-and-powermta/ (RP-001, PR(ct1)); and
 * the rule names of MantaMTA's bounce-rule seed data (simongh/MantaMTA, an open-source MTA) for
 * SC-002, SC-003, DY-002, OU-001 and OU-002. The newer "(S3140)", "(S3150)" and "(S775)" tokens are
 * not on any Microsoft page (https://wordtothewise.com/2017/10/troubleshooting-and-codes); their
 * meaning is the one Microsoft's own reply around them states (as quoted there and in the notes of
 * sisimai/rb-sisimai, lib/sisimai/rhost/microsoft.rb).
 */
const OUTLOOK_COM: ReasonTable = [
  // SC-001, OU-002: refused for the mail's spam-like traits or the IP's or domain's standing;
  // SC-002: the IP was seen harvesting addresses (namespace mining); SC-003: the IP is an open
  // relay or proxy; SC-004: the IP is blocked after complaints from Outlook.com users;
  // DY-001: the IP is in dynamic or residential space; DY-002: the host looks compromised;
  // OU-001: the IP is on a Spamhaus list.
  ['spam_block', /\b(?:SC-00[1-4]|DY-00[12]|OU-00[12])\b/],
  // (S3140), (S3150), also written (AS3140), (AS3150): the sender's network is on Microsoft's block
  // list; (S775): mail from the IP is held back for now because of the IP's reputation.
  ['spam_block', /\(A?S(?:3140|3150|775)\)/],
  // RP-001: the IP went over the message rate Hotmail allows it; PR(ct1): the IP went over the
  // number of connections Hotmail allows it.
  ['rate_limited', /\bRP-001\b|\bPR\(ct1\)/],
];

/**
 * AOL (its own mail servers, before 2018): "Error Messages" of the AOL postmaster site
 * (http://postmaster.info.aol.com/errors/, also http://postmaster.aol.com/errors/ and the later
 * http://postmaster.aol.com/Postmaster.Errors.php), whose codes come in parentheses after the
 * reply code ("554 (RTR:BL) http://postmaster.info.aol.com/errors/554rtrbl.html"). The stored
 * copies of those pages give only RTR:DU and RLY:B1 (with http://postmaster.info.aol.com/errors/554rlyb1.html);
 * the other meanings were read from copies and quotations of them: the list copied at
 * http://community.hostcheetah.com/topic/267/aol-postmaster/ (RTR:BB, RTR:CH, RTR:BG, RTR:RD);
 * https://blog.mailchannels.com/?p=953 (RTR:BL); https://www.wordtothewise.com/2012/08/aol-bounces-and-false-positives
 * (RLY:SN, CON:B1); https://kb.odin.com/en/121291 (DNS:NR); and the rule names of MantaMTA's
 * bounce-rule seed data (simongh/MantaMTA) for RTR:SC, RTR:GE, HVU:B1, DNS:B1, DNS:B2, RLY:B2,
 * RLY:BL, RLY:BD, RLY:CH, RLY:CS4, RLY:IR and RLY:OB.
 */
const AOL: ReasonTable = [
  // RTR:BB, RTR:DU: dynamic or residential IP space (AOL's own and Spamhaus's lists); RTR:RD: reverse
  // DNS that looks dynamic; RTR:BG: an IP not yet allocated; RTR:CH: a host on the network sends mail
  // matching known spam; RTR:SC: the IP has drawn too many blocks; RTR:BL: a lasting block for the
  // IP's poor reputation.
  ['spam_block', /\bRTR: ?(?:BB|DU|RD|BG|CH|SC|BL)\b/],
  // RLY:B1: an automatic day-long block once member complaints pass AOL's threshold; RLY:B2, RLY:BL:
  // a block on the IP for its reputation; RLY:BD: mail refused for its spam traits; RLY:CH: a
  // network peer is sending spam; RLY:CS4: the server may be compromised; RLY:IR: a dynamic IP
  // sending to many invalid recipients; RLY:OB: the forwarding IP is blocked.
  ['spam_block', /\bRLY: ?(?:B[12]|BL|BD|CH|CS4|IR|OB)\b/],
  // HVU:B1: a link in the message is on a spam URL list; DNS:B1, DNS:B2: the IP's reverse DNS looks
  // dynamic (with complaints, for B2); DNS:NR: the IP has no usable reverse DNS; CON:B1: the IP is
  // blocked for a while after a spike of unwelcome mail.
  ['spam_block', /\b(?:HVU: ?B1|DNS: ?(?:B[12]|NR)|CON: ?B1)\b/],
  // RLY:SN: a From or Reply-To that AOL forbids (one of its own reserved names, or an AOL affiliate's
  // address sent from an IP not allowed for it).
  ['policy_block', /\bRLY: ?SN\b/],
  // RTR:GE: a fault on AOL's side; retry after a day.
  ['system_error', /\bRTR: ?GE\b/],
];

/**
 * Facebook's mail servers (the facebook.com addresses, 2010-2014): the "response codes" of
 * http://postmaster.facebook.com/response_codes, which the refusals link to ("550 5.1.1 RCP-P2
 * http://postmaster.facebook.com/response_codes?ip=192.0.2.1#rcp ..."). That page is gone and no
 * stored copy could be read here; each code's meaning was taken from its transcription, a line per
 * code, in sisimai/p5-sisimai lib/Sisimai/Lhost/Facebook.pm (a copy of the page's table, not rules
 * written from sample mail). A code is three letters, a dash, P (permanent) or T (temporary) and a
 * digit, so only the documented ones are listed, each in full.
 */
const FACEBOOK: ReasonTable = [
  // RCP-P1, INT-P1, INT-P4: the recipient address does not exist; INT-P3: nor does the group address.
  ['user_unknown', /\b(?:RCP-P1|INT-P[134])\b/],
  // RCP-P2: the recipient's preferences keep the message out; RCP-P3: so do their privacy settings.
  // MSG-P2: an attachment type Facebook does not take; MSG-P3: a header field that may appear once
  // appears more than once; POL-P5: a virus; POL-P7: Facebook's abuse policies or its domain
  // authentication requirements are not met; DNS-P1, DNS-P2, DNS-T1: the MAIL FROM domain does not
  // exist, has no MX, or does not resolve for now.
  ['policy_block', /\b(?:RCP-P[23]|MSG-P[23]|POL-P[57]|DNS-P[12]|DNS-T1)\b/],
  // POL-P1: the sending IP is on the Spamhaus PBL; POL-P2: Facebook no longer takes mail from it;
  // POL-P3, POL-P4, POL-T1 to POL-T3: it is refused for some hours (1 to 48); POL-P6: a URL in the
  // message is blocked; DNS-P3, DNS-T2: the sending server's reverse DNS is missing or does not resolve.
  ['spam_block', /\b(?:POL-P[12346]|POL-T[123]|DNS-P3|DNS-T2)\b/],
  // MSG-P1, INT-P2: larger than Facebook's maximum size.
  ['message_too_large', /\b(?:MSG-P1|INT-P2)\b/],
  // CON-T2, CON-T3: the sending server holds, or has opened lately, too many connections to Facebook;
  // MSG-T1: more recipients than a message may have; CON-T4: more than a connection may have.
  ['rate_limited', /\b(?:CON-T[234]|MSG-T1)\b/],
  // RCP-T4: the recipient's account is deactivated (it may come back).
  ['account_disabled', /\bRCP-T4\b/],
  // CON-T1: Facebook's server holds too many connections; RCP-T1: the recipient is out of reach for
  // an internal fault; INT-Tn: a passing fault inside Facebook.
  ['system_error', /\b(?:CON-T1|RCP-T1|INT-T\d)\b/],
];

export const CONSUMER_MAIL_WORDING: ReasonTable = [...OUTLOOK_COM, ...AOL, ...FACEBOOK];
