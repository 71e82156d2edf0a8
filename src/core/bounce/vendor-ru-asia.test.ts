import { describe } from 'vitest';
import { itLeavesAlone, itReadsEach, type DocumentedRefusal } from '../../../test/helpers/bounce-reading.js';
import { RU_ASIA_WORDING } from './vendor-ru-asia.js';

/**
 * Refusals of Russian and Asian mailbox providers, written for this test from the meaning their
 * documentation gives each code or text (see the citations in bounce-vendor-ru-asia.ts), with
 * example.* names and 192.0.2.x addresses; none taken from a sample corpus. The fourth column is what
 * the status or reply code would give by itself, where that differs: the vendor's words must win.
 */
const REFUSALS: readonly DocumentedRefusal[] = [
  // NetEase: spam and reputation
  [
    'NetEase DT:SPM content',
    '554 DT:SPM 163 mx7,AbCdEf12 1700000000, see http://mail.163.com/help/help_spam_16.htm?ip=192.0.2.10',
    'spam_block',
    'policy_block',
  ],
  ['NetEase DT:SPM deferred', '451 DT:SPM, please try again', 'spam_block', 'system_error'],
  ['NetEase DT:RBL', '450 DT:RBL 192.0.2.10 ref 77', 'spam_block'],
  ['NetEase HL:REP', '421 HL:REP too many unknown recipients from 192.0.2.10', 'spam_block', 'system_error'],
  ['NetEase HL:MEP', '421 HL:MEP forged sender domains from 192.0.2.10', 'spam_block', 'system_error'],
  ['NetEase HL:IHU', '554 HL:IHU 192.0.2.10 suspended for a while', 'spam_block', 'policy_block'],
  ['NetEase MI:SPB', '554 MI:SPB ann@example.com may not send here', 'spam_block', 'policy_block'],
  ['NetEase WM:BLU', '450 WM:BLU ann@example.com', 'spam_block'],
  // NetEase: frequency and volume limits
  ['NetEase HL:ICC', '421 HL:ICC 192.0.2.10 has too many open connections', 'rate_limited', 'system_error'],
  ['NetEase HL:IFC', '421 HL:IFC 192.0.2.10 sent too much in a short while', 'rate_limited', 'system_error'],
  [
    'NetEase MI:SFQ',
    '451 MI:SFQ 163 smtp3,AbCd12 1700000000, please see http://mail.163.com/help/help_spam_16.htm?ip=192.0.2.10',
    'rate_limited',
    'system_error',
  ],
  ['NetEase MI:STC', "554 5.5.0 MI:STC ann@example.com reached today's allowance", 'rate_limited'],
  ['NetEase RP:TRC', '550 RP:TRC ann@example.com, come back tomorrow', 'rate_limited', 'user_unknown'],
  ['NetEase RP:RCL', '550 RP:RCL fewer recipients per message please', 'rate_limited', 'user_unknown'],
  ['NetEase RP:QRC', '451 RP:QRC ann@example.com held off for now', 'rate_limited', 'system_error'],
  // NetEase: authentication and protocol policy
  [
    'NetEase MI:SPF',
    '550 MI:SPF 126 mx2,EfGh34 1700000000, please see http://mail.163.com/help/help_spam_16.htm?ip=192.0.2.10',
    'policy_block',
    'user_unknown',
  ],
  ['NetEase MI:DMA', '550 MI:DMA example.com does not allow this message', 'policy_block', 'user_unknown'],
  ['NetEase MI:NHD', '550 MI:NHD say who you are', 'policy_block', 'user_unknown'],
  ['NetEase DT:SUM', '554 DT:SUM ann@example.com / bob@example.net', 'policy_block'],
  ['NetEase RP:FRL', '550 RP:FRL ann@example.net', 'policy_block', 'user_unknown'],
  // Yandex
  [
    'Yandex spam suspicion',
    '554 5.7.1 Message rejected under suspicion of SPAM; https://ya.cc/example 1700000000-AbCd',
    'spam_block',
    'policy_block',
  ],
  [
    'Yandex spam statistics',
    '550 5.7.1 Blocked by spam statistics - see https://example.net/ 192.0.2.10',
    'spam_block',
    'policy_block',
  ],
  ['Yandex blocked account', '550 5.7.1 Policy rejection on the target address', 'account_disabled', 'policy_block'],
  // Mail.ru
  [
    'Mail.ru not-spam link',
    '550 Refused. Please visit http://help.mail.ru/notspam-support/id?c=AbCd12 or report details. Error code: 0A1B. ID: 0001.',
    'spam_block',
    'user_unknown',
  ],
];

describe('documented refusals of Russian and Asian mailbox providers', () => {
  itReadsEach(REFUSALS);

  itLeavesAlone('leaves texts without these codes (and look-alikes) to the other rules', RU_ASIA_WORDING, [
    ['550 5.1.1 <ann@example.net>: no such user here', 'user_unknown'],
    ['552 5.2.2 Quota exceeded for ann@example.net', 'mailbox_full'],
    ['421 Try again later, ticket XDT:SPM2 HL:ICCX MI:SFQ1 ARP:TRC', 'system_error'],
    ['550 5.1.1 ADT:SUMO mailbox unknown', 'user_unknown'],
    ['550 5.7.1 Policy rejection on the target', 'policy_block'],
    ['550 5.1.1 see help.mail.ru/notspam for ann@example.net: user unknown', 'user_unknown'],
  ]);
});
