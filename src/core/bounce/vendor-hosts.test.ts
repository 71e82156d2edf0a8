import { describe } from 'vitest';
import { itLeavesAlone, itReadsEach, type DocumentedRefusal } from '../../../test/helpers/bounce-reading.js';
import { HOSTING_WORDING } from './vendor-hosts.js';

/**
 * Refusals of hosting and mailbox providers, written for this test from the meaning their own
 * documentation gives each code (see the citations in bounce-vendor-hosts.ts), with example.*
 * names and 192.0.2.x addresses; none taken from a sample corpus. The fourth column is what the status
 * or reply code would give by itself, where that differs: the vendor's code must win over it.
 */
const HOSTED: readonly DocumentedRefusal[] = [
  // GoDaddy "IB" codes
  ['GoDaddy IB104 blocklist', '554 Refused: 192.0.2.10 appears on a Spamhaus list IB104', 'spam_block', 'policy_block'],
  [
    'GoDaddy IB103 reputation',
    '554 Refused: 192.0.2.10 has a poor standing with Cloudmark IB103',
    'spam_block',
    'policy_block',
  ],
  ['GoDaddy IB108 rDNS', '421 Deferred for now: 192.0.2.10 has no working PTR. IB108', 'spam_block', 'system_error'],
  [
    'GoDaddy IB110 spam host',
    '554 192.0.2.10 is blocked for an hour after too much junk mail IB110',
    'spam_block',
    'policy_block',
  ],
  [
    'GoDaddy IB113 bad recipients',
    '554 192.0.2.10 is blocked until tomorrow, too many bad recipients IB113',
    'spam_block',
    'policy_block',
  ],
  [
    'GoDaddy IB212 content',
    '552 5.2.0 Message refused, judged as junk by the community IB212',
    'spam_block',
    'account_disabled',
  ],
  [
    'GoDaddy IB007 sessions',
    '421 Too many open sessions from 192.0.2.10, close some. IB007',
    'rate_limited',
    'system_error',
  ],
  ['GoDaddy IB504 hourly', '550 192.0.2.10 reached its hourly message allowance IB504', 'rate_limited', 'user_unknown'],
  [
    'GoDaddy IB510 per session',
    '550 Session message maximum reached, reconnect and retry IB510',
    'rate_limited',
    'user_unknown',
  ],
  ['GoDaddy IB605 recipients', '452 Fewer recipients please, then retry IB605', 'rate_limited', 'system_error'],
  ['GoDaddy IB401 inbound auth', '535 AUTH is not offered on this inbound host IB401', 'policy_block'],
  [
    'GoDaddy IB501 empty From',
    '550 ann@example.com: an empty From: header is not accepted IB501',
    'policy_block',
    'user_unknown',
  ],
  [
    'GoDaddy IB508 SPF',
    '550 5.1.0 192.0.2.10 may not send for example.com by its SPF. IB508',
    'policy_block',
    'user_unknown',
  ],
  ['GoDaddy IB705 virus', '552 Infected message refused IB705', 'policy_block', 'mailbox_full'],
  ['GoDaddy IB101 busy', '421 Busy, come back later. IB101', 'system_error'],
  // Zoho (ZeptoMail SMTP error codes)
  ['Zoho virus', '552 5.7.1 virus Eicar-Test detected by Zoho Mail', 'policy_block'],
  ['Zoho no subject', '5.2.1 Subject is mandatory.', 'policy_block', 'account_disabled'],
  ['Zoho size', '5.2.0 Email size exceeded the policy.', 'message_too_large', 'account_disabled'],
  ['Zoho relaying', '553 Relaying disallowed as ann@example.net', 'policy_block', 'user_unknown'],
  // Tencent QQ Mail / Exmail
  ['Tencent IP frequency', '550 Ip frequency limited [Xy12 IP: 192.0.2.10]', 'rate_limited', 'user_unknown'],
  [
    'Tencent sender frequency',
    '550 Sender frequency limited https://service.mail.qq.com/cgi-bin/help?subtype=1&&id=20022&&no=1000723',
    'rate_limited',
    'user_unknown',
  ],
  [
    'Tencent recipient flood',
    '550 Mailbox unavailable or access denied [Ab34 IP: 192.0.2.10]',
    'rate_limited',
    'user_unknown',
  ],
  [
    'Tencent content',
    '550 Mail content denied. https://service.exmail.qq.com/cgi-bin/help?subtype=1&&id=20022&&no=1000726',
    'spam_block',
    'user_unknown',
  ],
  [
    'Tencent no mailbox',
    '550 No such account. https://service.mail.qq.com/cgi-bin/help?subtype=1&&id=20022&&no=1000728',
    'user_unknown',
  ],
  [
    'Tencent bad syntax',
    '501 Malformed address. https://service.mail.qq.com/cgi-bin/help?subtype=1&&id=20022&&no=1000730',
    'user_unknown',
    'system_error',
  ],
];

describe('documented refusals of hosting and mailbox providers', () => {
  itReadsEach(HOSTED);

  itLeavesAlone('leaves texts without a vendor code to the other rules', HOSTING_WORDING, [
    ['550 5.1.1 <ann@example.net>: no such user here', 'user_unknown'],
    ['552 5.2.2 Quota exceeded for ann@example.net', 'mailbox_full'],
    ['421 4.7.0 Try again later, ticket IB1040 FIB510 IBM101', 'system_error'],
    ['550 Mailbox unavailable or access denied', 'user_unknown'],
    ['550 see id=20022&&no=10007280 for details', 'user_unknown'],
  ]);
});
