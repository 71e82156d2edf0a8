import { describe, expect, it } from 'vitest';
import { bounceTypeOf, findReplyCode, findStatus, reasonOf } from './bounce-classify.js';

describe('bounce classification', () => {
  it('finds the enhanced status and the reply code in a diagnostic', () => {
    expect(findStatus('550 5.1.1 <a@b.example>: user unknown')).toBe('5.1.1');
    expect(findReplyCode('550 5.1.1 <a@b.example>: user unknown')).toBe('550');
    expect(findStatus('no codes here, version 1.2.3.4')).toBeNull();
  });

  it('judges hard or soft by the status first, then the reply code, then the reason', () => {
    expect(bounceTypeOf({ action: 'failed', status: '4.2.2', replyCode: '552', reason: 'mailbox_full' })).toBe('soft');
    expect(bounceTypeOf({ action: null, status: null, replyCode: '550', reason: 'mailbox_full' })).toBe('hard');
    expect(bounceTypeOf({ action: 'delayed', status: '5.4.7', replyCode: null, reason: 'expired' })).toBe('soft');
    expect(bounceTypeOf({ action: null, status: null, replyCode: null, reason: 'user_unknown' })).toBe('hard');
    expect(bounceTypeOf({ action: null, status: null, replyCode: null, reason: 'rate_limited' })).toBe('soft');
    expect(bounceTypeOf({ action: null, status: null, replyCode: null, reason: null })).toBeNull();
  });

  it('names the reason from a definite status, then the wording, then the status class', () => {
    expect(reasonOf('5.1.1', 'whatever the text says')).toBe('user_unknown');
    expect(reasonOf('5.7.1', 'Message rejected as spam by Content Filtering')).toBe('spam_block');
    expect(reasonOf('5.0.0', 'The email account that you tried to reach does not exist')).toBe('user_unknown');
    expect(reasonOf(null, 'Recipient address rejected: Disabled recipient address')).toBe('account_disabled');
    expect(reasonOf(null, 'quota exceeded for this mailbox')).toBe('mailbox_full');
    expect(reasonOf('4.4.1', 'no answer')).toBe('system_error');
    expect(reasonOf(null, 'nothing recognisable')).toBeNull();
  });
});
