import { describe } from 'vitest';
import { itLeavesAlone, itReadsEach, type DocumentedRefusal } from '../../../test/helpers/bounce-reading.js';
import { CONSUMER_MAIL_WORDING } from './vendor-consumer-mail.js';

/**
 * Refusals of consumer mailbox providers, written for this test from the meaning documented for
 * each code (see the citations in bounce-vendor-consumer-mail.ts), with example.* names and
 * 192.0.2.x addresses; none taken from a sample corpus. The fourth column is what the status or reply
 * code would give by itself, where that differs: the vendor's code must win over it.
 */
const CONSUMER: readonly DocumentedRefusal[] = [
  // Outlook.com / Hotmail
  [
    'Outlook SC-001 reputation',
    '550 SC-001 (XYZ001-MC1F2) Mail from 192.0.2.10 was refused, see the postmaster pages',
    'spam_block',
    'user_unknown',
  ],
  [
    'Outlook SC-002 harvesting',
    '550 SC-002 (XYZ001-MC1F2) Mail from 192.0.2.10 was refused',
    'spam_block',
    'user_unknown',
  ],
  [
    'Outlook SC-003 open proxy',
    '550 SC-003 Refused: 192.0.2.10 was found relaying for anyone',
    'spam_block',
    'user_unknown',
  ],
  [
    'Outlook SC-004 complaints',
    '550 SC-004 Refused: users of this service reported mail from 192.0.2.10',
    'spam_block',
    'user_unknown',
  ],
  [
    'Outlook DY-001 dynamic',
    '550 DY-001 (XYZ001-MC1F2) Refused: 192.0.2.10 is in an address pool for home users',
    'spam_block',
    'user_unknown',
  ],
  ['Outlook DY-002 compromised', '550 DY-002 Refused: 192.0.2.10 seems to be hijacked', 'spam_block', 'user_unknown'],
  [
    'Outlook OU-001 list',
    '550 OU-001 (XYZ001-MC1F2) Refused, see the troubleshooting page',
    'spam_block',
    'user_unknown',
  ],
  ['Outlook OU-002 content', '550 OU-002 Refused for what the message looks like', 'spam_block', 'user_unknown'],
  [
    'Outlook S3150 block list',
    '550 5.7.1 Unfortunately, mail from [192.0.2.10] was not taken (S3150). [AB1CD2EF3.example.net]',
    'spam_block',
    'policy_block',
  ],
  ['Outlook AS3140 block list', '550 5.7.1 Refused for now: [192.0.2.10] (AS3140)', 'spam_block', 'policy_block'],
  ['Outlook S775 reputation', '451 4.7.650 Held back for a while: [192.0.2.10] (S775)', 'spam_block', 'policy_block'],
  [
    'Outlook RP-001 rate',
    '421 RP-001 (XYZ001-MC1F2) Too much from 192.0.2.10 this hour, later please',
    'rate_limited',
    'system_error',
  ],
  [
    'Hotmail PR(ct1) connections',
    '421 PR(ct1) 192.0.2.10 holds too many sessions open, later please',
    'rate_limited',
    'system_error',
  ],
  // AOL (legacy postmaster codes)
  [
    'AOL RTR:BB dynamic',
    '554 (RTR:BB) http://postmaster.info.aol.com/errors/554rtrbb.html',
    'spam_block',
    'policy_block',
  ],
  ['AOL RTR:RD rDNS', '554 5.7.1 (RTR:RD) see the postmaster site', 'spam_block', 'policy_block'],
  [
    'AOL RTR:BL reputation',
    '554 (RTR:BL) http://postmaster.info.aol.com/errors/554rtrbl.html',
    'spam_block',
    'policy_block',
  ],
  [
    'AOL RTR:GE fault',
    '554 (RTR:GE) http://postmaster.info.aol.com/errors/554rtrge.html',
    'system_error',
    'policy_block',
  ],
  [
    'AOL RLY:B1 complaints',
    '554 RLY:B1 http://postmaster.info.aol.com/errors/554rlyb1.html',
    'spam_block',
    'policy_block',
  ],
  ['AOL RLY:CS4 compromised', '421 4.7.1 : (RLY:CS4) try later', 'spam_block', 'policy_block'],
  ['AOL RLY:SN forbidden From', '554 (RLY:SN) http://postmaster.info.aol.com/errors/554rlysn.html', 'policy_block'],
  [
    'AOL HVU:B1 URL',
    '554 5.7.1 : (HVU:B1) http://postmaster.info.aol.com/errors/554hvub1.html',
    'spam_block',
    'policy_block',
  ],
  [
    'AOL DNS:NR no PTR',
    '421 4.7.1 : (DNS:NR) http://postmaster.info.aol.com/errors/421dnsnr.html',
    'spam_block',
    'policy_block',
  ],
  [
    'AOL CON:B1 spike',
    '421 (CON: B1) http://postmaster.info.aol.com/errors/421conb1.html',
    'spam_block',
    'system_error',
  ],
  // Facebook (its former mail service's response codes)
  [
    'Facebook RCP-P1 no address',
    '550 5.1.1 RCP-P1 http://postmaster.facebook.com/response_codes?ip=192.0.2.10#rcp',
    'user_unknown',
  ],
  [
    'Facebook RCP-P2 preferences',
    '550 5.1.1 RCP-P2 http://postmaster.facebook.com/response_codes?ip=192.0.2.10#rcp Refused',
    'policy_block',
    'user_unknown',
  ],
  ['Facebook RCP-P3 privacy', '550 5.7.1 RCP-P3 see the response codes page', 'policy_block'],
  [
    'Facebook POL-P1 PBL',
    '554 5.7.1 POL-P1 http://postmaster.facebook.com/response_codes?ip=192.0.2.10#pol',
    'spam_block',
    'policy_block',
  ],
  [
    'Facebook POL-T2 hours',
    '421 4.7.1 POL-T2 http://postmaster.facebook.com/response_codes?ip=192.0.2.10#pol',
    'spam_block',
    'another',
  ],
  ['Facebook POL-P6 URL', '554 5.7.1 POL-P6 a link in the message', 'spam_block', 'policy_block'],
  ['Facebook MSG-P1 size', '552 5.3.4 MSG-P1 http://postmaster.facebook.com/response_codes#msg', 'message_too_large'],
  ['Facebook MSG-P2 attachment', '554 5.6.1 MSG-P2 see the response codes page', 'policy_block'],
  [
    'Facebook DNS-P3 reverse DNS',
    '550 5.7.1 DNS-P3 http://postmaster.facebook.com/response_codes?ip=192.0.2.10#dns',
    'spam_block',
    'policy_block',
  ],
  [
    'Facebook DNS-P1 sender domain',
    '550 5.1.8 DNS-P1 http://postmaster.facebook.com/response_codes#dns',
    'policy_block',
  ],
  [
    'Facebook CON-T3 new connections',
    '421 4.7.0 CON-T3 http://postmaster.facebook.com/response_codes?ip=192.0.2.10#con',
    'rate_limited',
    'another',
  ],
  ['Facebook MSG-T1 recipients', '452 4.5.3 MSG-T1 see the response codes page', 'rate_limited'],
  [
    'Facebook RCP-T4 deactivated',
    '450 4.2.1 RCP-T4 http://postmaster.facebook.com/response_codes#rcp',
    'account_disabled',
  ],
  ['Facebook RCP-T1 internal', '451 4.3.0 RCP-T1 http://postmaster.facebook.com/response_codes#rcp', 'system_error'],
  ['Facebook INT-T2 internal', '451 4.4.0 INT-T2 try later', 'system_error'],
];

describe('documented refusals of consumer mailbox providers', () => {
  itReadsEach(CONSUMER);

  itLeavesAlone('leaves texts without a vendor code to the other rules', CONSUMER_MAIL_WORDING, [
    ['550 5.1.1 <ann@example.net>: no such user here', 'user_unknown'],
    ['552 5.2.2 Quota exceeded for ann@example.net', 'mailbox_full'],
    ['550 5.1.1 <ann@example.com>: unknown, ref DESC-001 SC-0012 OU-003', 'user_unknown'],
    ['421 4.3.0 Try again later (S31500) (S3114) RP-0011', 'system_error'],
    ['550 5.1.1 ann@example.com unknown, ticket XRTR:BB RLY:B12 DNS:NRX', 'user_unknown'],
    ['550 5.1.1 ann@example.com unknown, ref XRCP-P2 POL-P12 MSG-P9 INT-T', 'user_unknown'],
  ]);
});
