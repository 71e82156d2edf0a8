import { describe, expect, it } from 'vitest';
import { itLeavesAlone, itReadsEach, type DocumentedRefusal } from '../../../test/helpers/bounce-reading.js';
import { reasonIn, statusMeaning } from './classify.js';
import { US_ISPS_WORDING } from './vendor-us-isps.js';

/**
 * Refusals as Cox, Spectrum and Comcast document their codes (written for this test from the meaning
 * their postmaster pages give each code, with example.* names and 192.0.2.x addresses; none taken from
 * a sample corpus). The reason must follow from the code, whatever generic status comes with it.
 */
const DOCUMENTED: readonly DocumentedRefusal[] = [
  // Cox "Error Codes"
  ['Cox CXBL', '554 5.7.1 cxr.mx.example.net cmsmtp 192.0.2.10 refused. AUP#CXBL', 'spam_block'],
  ['Cox CDRBL', '421 4.7.1 cmsmtp 192.0.2.11 deferred for now. AUP#CDRBL', 'spam_block'],
  ['Cox IPBL', '554 5.7.1 cmsmtp 192.0.2.12 refused. AUP#IPBL0101', 'spam_block'],
  ['Cox URLBL', '554 5.7.1 cmsmtp message refused. AUP#URLBL011', 'spam_block'],
  ['Cox CXDNS', '554 5.7.1 cmsmtp 192.0.2.13 refused. AUP#CXDNS', 'spam_block'],
  ['Cox CXTHRT', '550 5.7.1 <ann@example.com> sending held. AUP#CXTHRT', 'spam_block'],
  ['Cox CXMJ', '550 5.7.1 <ann@example.com> sending held. AUP#CXMJ', 'spam_block'],
  ['Cox CXSNDR', '550 5.1.0 <ann@example.com> refused. AUP#CXSNDR', 'policy_block'],
  ['Cox CXSMTP', '554 5.0.0 cmsmtp session ended. AUP#CXSMTP', 'policy_block'],
  ['Cox CXCNCT', '421 4.7.0 cmsmtp 192.0.2.14 refused. AUP#CXCNCT', 'rate_limited'],
  ['Cox CXMXRT', '452 4.0.0 cmsmtp <bob@example.net> deferred. AUP#CXMXRT', 'rate_limited'],
  // Spectrum "Understanding Email Error Codes"
  ['Spectrum 1000', '554 5.7.1 mx.example.net cmsmtp 192.0.2.20 refused. AUP#In-1000', 'spam_block'],
  ['Spectrum 1020', '554 5.7.1 mx.example.net cmsmtp <ann@example.com> refused. AUP#I-1020', 'spam_block'],
  ['Spectrum 1100', '554 5.7.1 mx.example.net cmsmtp 192.0.2.21 refused. AUP#I-1100', 'spam_block'],
  ['Spectrum 1220', '554 5.7.1 mx.example.net cmsmtp 192.0.2.22 refused. AUP#In-1220', 'spam_block'],
  ['Spectrum 1090', '451 4.3.0 mx.example.net cmsmtp try later. AUP#I-1090', 'system_error'],
  ['Spectrum 1160', '550 5.7.1 mx.example.net cmsmtp refused. AUP#I-1160', 'policy_block'],
  ['Spectrum 1260', '550 5.7.1 mx.example.net cmsmtp refused. AUP#I-1260', 'policy_block'],
  ['Spectrum 1500', '550 5.7.1 smtp.example.net cmsmtp refused. AUP#O-1500', 'policy_block'],
  ['Spectrum 1310', '550 5.1.0 mx.example.net cmsmtp <ann@example.com> refused. AUP#I-1310', 'rate_limited'],
  ['Spectrum 1340', '421 4.7.0 mx.example.net cmsmtp 192.0.2.23 refused. AUP#In-1340', 'rate_limited'],
  ['Spectrum 1550', '452 4.5.3 smtp.example.net cmsmtp refused. AUP#Out-1550', 'rate_limited'],
  ['Spectrum 1530', '552 5.7.1 smtp.example.net cmsmtp refused. AUP#O-1530', 'message_too_large'],
  // Comcast / Xfinity "Mail delivery error codes"
  [
    'Comcast BL000000',
    '554 5.7.1 mx.example.net comcast 192.0.2.30 refused. See example.net/codes#BL000000',
    'spam_block',
  ],
  [
    'Comcast BL000011',
    '554 5.7.1 mx.example.net comcast 192.0.2.31 refused. See example.net/codes#BL000011',
    'spam_block',
  ],
  ['Comcast BL006', '550 5.7.1 mx.example.net comcast 192.0.2.32 refused (BL006)', 'spam_block'],
  [
    'Comcast ES000010',
    '554 5.7.1 mx.example.net comcast 192.0.2.33 refused. See example.net/codes#ES000010',
    'spam_block',
  ],
  [
    'Comcast RL000010',
    '451 4.2.0 mx.example.net comcast 192.0.2.34 slow down. See example.net/codes#RL000010',
    'rate_limited',
  ],
  [
    'Comcast RL000002',
    '421 4.1.0 mx.example.net comcast 192.0.2.35 later. See example.net/codes#RL000002',
    'rate_limited',
  ],
  ['Comcast not our customer', '550 5.1.1 Not our customer', 'user_unknown'],
  ['Comcast sessions', '421 mx.example.net comcast Too many sessions opened', 'rate_limited'],
  // EarthLink (Vade) "Inbound error codes"
  ['EarthLink ELNK_101 threat list', '550 5.7.1 Connection refused ELNK_101', 'spam_block', 'policy_block'],
  ['EarthLink ELNK_105 reverse DNS', '550 5.7.1 Connection refused ELNK_105', 'spam_block', 'policy_block'],
  ['EarthLink ELNK_110 connections', '421 4.2.1 Connection deferred ELNK_110', 'rate_limited', 'another'],
  ['EarthLink ELNK_103 unavailable', '421 4.2.1 Connection deferred ELNK_103', 'system_error', 'another'],
  // AT&T "Block/Error Messages"
  ['AT&T no reverse DNS', '421-failure in DNS look-up.', 'spam_block', 'system_error'],
];

describe('US ISPs: documented refusal codes', () => {
  itReadsEach(DOCUMENTED);

  // For each vendor, a code that overrules what its generic status alone would say.
  it.each([
    ['Cox IP block over 5.7.1', '554 5.7.1 cmsmtp 192.0.2.40 refused. AUP#IPBL1000', '5.7.1', 'spam_block'],
    [
      'Spectrum connection limit over 5.1.0',
      '550 5.1.0 cmsmtp <ann@example.com> refused. AUP#I-1320',
      '5.1.0',
      'rate_limited',
    ],
    [
      'Comcast throttle over 4.2.0',
      '451 4.2.0 comcast 192.0.2.41 see example.net/codes#RL000001',
      '4.2.0',
      'rate_limited',
    ],
    [
      'Comcast blocklist over 5.7.1',
      '554 5.7.1 comcast 192.0.2.42 see example.net/codes#BL000100',
      '5.7.1',
      'spam_block',
    ],
  ] as const)('%s', (_name, diagnostic, status, reason) => {
    expect(statusMeaning(status)?.reason).not.toBe(reason);
    expect(reasonIn({ status, replyCode: diagnostic.slice(0, 3), texts: [diagnostic] })).toBe(reason);
  });

  itLeavesAlone('leaves a text with no vendor code to the status and generic wording', US_ISPS_WORDING, [
    ['554 5.7.1 mx.example.net 192.0.2.50 message refused by local policy', 'policy_block'],
  ]);

  it('does not take look-alike tokens for codes', () => {
    const lookalikes = ['AUP#CXBLX', 'IPBL2000', 'BL0PR02MB1234.example.net', 'RL0000001', 'AUP#I-1005', 'ES000011'];
    for (const text of lookalikes) expect(US_ISPS_WORDING.filter(([, pattern]) => pattern.test(text))).toEqual([]);
  });
});
