import { describe } from 'vitest';
import { itLeavesAlone, itReadsEach, type DocumentedRefusal } from '../../../test/helpers/bounce-reading.js';
import { GATEWAYS_WORDING } from './vendor-gateways.js';

/**
 * Refusals of mail filters, blocklists, control panels and policy servers, written for this test
 * from the meaning each vendor documents (see the citations in bounce-vendor-gateways.ts), with
 * example.* names and 192.0.2.x addresses; none taken from a sample corpus. The fourth column is
 * what the status or reply code would give by itself, where that differs: the vendor's words win.
 */
const GATEWAYS: readonly DocumentedRefusal[] = [
  // Trend Micro Email Reputation Services
  [
    'Trend Micro ERS-QIL',
    '554 5.7.1 <ann@example.net>: Recipient address rejected: ERS-QIL.',
    'spam_block',
    'policy_block',
  ],
  [
    'Trend Micro ERS-DUL',
    '550 Mail from <192.0.2.10> was refused, the sender IP is in ERS-DUL.',
    'spam_block',
    'user_unknown',
  ],
  ['Trend Micro ERS-RBL', '450 4.7.1 Refused for now: ERS-RBL', 'spam_block', 'policy_block'],
  // Proofpoint Dynamic Reputation: the sending IP blocked, with the link to its IP check (earlier: its DNSBL look-up)
  [
    'Proofpoint IP check',
    '550 5.7.0 Blocked - see https://ipcheck.proofpoint.com/?ip=192.0.2.10',
    'spam_block',
    'policy_block',
  ],
  [
    'Proofpoint DNSBL look-up',
    '554 5.7.0 Blocked - see https://support.proofpoint.com/dnsbl-lookup.cgi?ip=192.0.2.10',
    'spam_block',
    'policy_block',
  ],
  // Spamhaus's "open resolver" answer: the receiver's DNS, not the sender
  [
    'Spamhaus open resolver',
    '554 5.7.1 Service unavailable; Client host [192.0.2.10] blocked using zen.spamhaus.org; Error: open resolver; https://check.spamhaus.org/returnc/pub/192.0.2.53',
    'system_error',
    'policy_block',
  ],
  [
    'Spamhaus returnc link',
    '550 Refused; see https://www.spamhaus.org/returnc/vol/192.0.2.53',
    'system_error',
    'user_unknown',
  ],
  // EveryCloud classification codes, MailCleaner's stage 1
  ['EveryCloud loop', '554 5.5.6 Loop detection > 10 mal X-antispameurope-disclaimer', 'system_error'],
  ['MailCleaner blocked sender', '550 blacklisted sender: bob@example.org', 'policy_block', 'user_unknown'],
  // Control panels' outgoing limits and suspensions
  [
    'cPanel hourly',
    'Domain example.com has exceeded the max emails per hour (120/100 (120%)) allowed. Message discarded.',
    'rate_limited',
  ],
  [
    'cPanel defers',
    'Domain example.com has exceeded the max defers and failures per hour (5/5 (100%)) allowed.',
    'rate_limited',
  ],
  ['DirectAdmin daily', 'You (ann) have reached your daily email limit of 500 emails', 'rate_limited'],
  [
    'DirectAdmin suspended',
    '451 The domain example.com is currently suspended. Try later.',
    'account_disabled',
    'system_error',
  ],
  [
    'Plesk outgoing limit',
    '5.7.0 The limit on the number of allowed outgoing messages was exceeded. Try again later.',
    'rate_limited',
    'another',
  ],
  // iRedAPD throttling
  [
    'iRedAPD message count',
    '554 5.7.1 <ann@example.com>: Recipient address rejected: Quota exceeded (number of mails in total)',
    'rate_limited',
    'policy_block',
  ],
  [
    'iRedAPD single message size',
    '554 5.7.1 <END-OF-MESSAGE>: End-of-data rejected: Quota exceeded (size of single mail message)',
    'message_too_large',
    'policy_block',
  ],
];

describe('documented refusals of filters, blocklists, control panels and policy servers', () => {
  itReadsEach(GATEWAYS);

  itLeavesAlone('leaves look-alikes to the other rules', GATEWAYS_WORDING, [
    ['554 5.7.1 Service unavailable; Client host [192.0.2.10] blocked using zen.spamhaus.org', 'spam_block'],
    ['552 5.2.2 Quota exceeded (mailbox for user is full)', 'mailbox_full'],
    ['550 Recipient address rejected: PERS-QILX', 'policy_block'],
    ['550 Sender address blacklisted', 'policy_block'],
  ]);
});
