import { describe, expect, it } from 'vitest';
import { itLeavesAlone, itReadsEach, type DocumentedRefusal } from '../../../test/helpers/bounce-reading.js';
import { EU_ISPS_WORDING } from './vendor-eu-isps.js';

/**
 * Refusals of European mailbox providers and Mimecast, one per documented code family, written
 * for this test from the meaning their postmaster pages give (example.* names, 192.0.2.x
 * addresses; none taken from a sample corpus). `'another'` in the fourth column marks a case where the reply code
 * and status by themselves would name another reason: there the vendor's code decides.
 */
const DOCUMENTED: readonly DocumentedRefusal[] = [
  // GMX / WEB.DE / mail.com: the case in the link's c= parameter
  [
    'GMX c=r0201',
    '554 No service for you, see https://postmaster.gmx.net/en/case?c=r0201&i=ip&v=192.0.2.10&r=x1',
    'spam_block',
    'another',
  ],
  [
    'WEB.DE c=hi',
    '554 Transaction failed, for the why visit https://web.de/email/senderguidelines?ip=192.0.2.11&c=hi',
    'policy_block',
  ],
  [
    'WEB.DE c=rdns',
    '550 Not accepted; details at https://postmaster.web.de/error-messages?ip=192.0.2.12&c=rdns',
    'spam_block',
    'another',
  ],
  [
    'mail.com SPF',
    '550 <ann@example.com>: Reject due to SPF policy; 192.0.2.13 may not send for example.com',
    'policy_block',
  ],
  ['mail.com policy violations', '421 Reject due to policy violations', 'policy_block', 'another'],
  ['mail.com rate limit', '421 Rate limit reached. Please try again later', 'rate_limited', 'another'],
  ['mail.com administrative reject', '451 Administrative reject', 'system_error'],
  // Orange / Wanadoo: OFR codes
  ['Orange OFR004_104', '421 mwinf0001 ME Service refuse pour 192.0.2.20. OFR004_104 [104]', 'rate_limited', 'another'],
  ['Orange OFR_999', '421 mwinf0002 ME Service refuse, essayez plus tard. OFR_999 [999]', 'spam_block', 'another'],
  // T-Online: the tag after the rx.t-online.de contact
  [
    'T-Online BL',
    '554 IP=192.0.2.30 - Refused. Please write to abc@rx.t-online.de about it. (BL)',
    'spam_block',
    'another',
  ],
  [
    'T-Online NOWL',
    '554 IP=192.0.2.31 - None/bad reputation. Write to xyz@rx.t-online.de for a reset. (NOWL)',
    'spam_block',
    'another',
  ],
  // Mimecast SMTP error codes
  [
    'Mimecast invalid recipient',
    '550 Invalid Recipient - https://community.mimecast.com/docs/DOC-1369#550 [Ab1.eu1]',
    'user_unknown',
  ],
  [
    'Mimecast user entry',
    '550 Envelope blocked - User Entry - https://community.mimecast.com/docs/DOC-1369#550',
    'policy_block',
    'another',
  ],
  [
    'Mimecast anti-spoofing',
    '550 Rejected by header based Anti-Spoofing policy: ann@example.com - https://community.mimecast.com/docs/DOC-1369#550',
    'policy_block',
  ],
  [
    'Mimecast reputation',
    '550 csi.mimecast.org Poor Reputation Sender. - https://community.mimecast.com/docs/DOC-1369#550',
    'spam_block',
    'another',
  ],
  [
    'Mimecast IP blacklisted',
    '451 IP temporarily blacklisted - https://community.mimecast.com/docs/DOC-1369#451',
    'spam_block',
    'another',
  ],
  [
    'Mimecast load',
    '421 Unable to process connection at this time - https://community.mimecast.com/docs/DOC-1369#421',
    'system_error',
  ],
  [
    'Mimecast security policies',
    '554 Email rejected due to security policies - https://community.mimecast.com/docs/DOC-1369#554',
    'policy_block',
  ],
  [
    'Mimecast open relay',
    '451 Open relay not allowed - https://community.mimecast.com/docs/DOC-1369#451',
    'policy_block',
  ],
  [
    'Mimecast sender blocked',
    '421 Sender address blocked - https://community.mimecast.com/docs/DOC-1369#421',
    'policy_block',
  ],
  // Sophos Email "SMTP error codes"
  ['Sophos XGEMAIL_0004 RBL', '550 5.7.1 Rejected by the gateway (XGEMAIL_0004)', 'spam_block', 'policy_block'],
  ['Sophos XGEMAIL_0005 DBL', '550 5.7.1 Rejected by the gateway (XGEMAIL_0005)', 'spam_block', 'policy_block'],
  ['Sophos XGEMAIL_0008 own block list', '550 5.7.1 Rejected by the gateway (XGEMAIL_0008)', 'policy_block'],
  ['Sophos XGEMAIL_0011 no recipient', '550 5.7.1 Rejected by the gateway (XGEMAIL_0011)', 'user_unknown', 'another'],
  ['Sophos XGEMAIL_0012 size', '552 Rejected by the gateway (XGEMAIL_0012)', 'message_too_large', 'another'],
  ['Sophos XGEMAIL_0014 inbound rate', '450 Rejected for now by the gateway (XGEMAIL_0014)', 'rate_limited', 'another'],
];

describe('documented refusals of European mailbox providers and Mimecast', () => {
  itReadsEach(DOCUMENTED);

  it('has, for each vendor, a case the codes alone would read otherwise', () => {
    for (const vendor of ['GMX', 'WEB.DE', 'Orange', 'T-Online', 'Mimecast', 'Sophos'])
      expect(DOCUMENTED.some(([source, , , codesAlone]) => source.startsWith(vendor) && codesAlone === 'another')).toBe(
        true,
      );
  });

  itLeavesAlone('leaves a text with no vendor code alone', EU_ISPS_WORDING, [
    ['550 5.1.1 <ann@example.net>: Recipient address rejected: User unknown in local recipient table', 'user_unknown'],
    ['554 5.7.1 Rejected, see https://example.com/help?ip=192.0.2.40&c=hi', 'policy_block'],
    ['421 4.7.0 Service refused for 192.0.2.41. OFR004_1040 [1040]', 'policy_block'],
  ]);
});
