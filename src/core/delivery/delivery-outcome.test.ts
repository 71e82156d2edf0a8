import { describe, expect, it } from 'vitest';
import { decideDelivery, parseRetryHint } from './delivery-outcome.js';
import type { RelayReply, RelayStage } from './relay.js';

const failure = (
  stage: RelayStage,
  replyCode: number | null,
  enhancedStatus: string | null,
  text: string,
  errorCode: string | null = null,
): RelayReply => ({
  ok: false,
  stage,
  replyCode,
  enhancedStatus,
  text,
  errorCode,
  refused: [],
});

describe('decideDelivery', () => {
  it('treats a 2yz as sent, keeping partial refusals', () => {
    const refused = [{ recipient: 'b@example.com', replyCode: 550, enhancedStatus: '5.1.1', text: 'no such user' }];
    expect(
      decideDelivery({
        ok: true,
        replyCode: 250,
        enhancedStatus: '2.0.0',
        text: '250 2.0.0 Ok',
        accepted: ['a@example.com'],
        refused,
      }),
    ).toMatchObject({
      kind: 'sent',
      replyCode: 250,
      refused,
    });
  });

  it.each([
    ['451 greylisting', failure('data', 451, '4.7.1', '451 4.7.1 Greylisted'), 'deferred'],
    ['452 quota', failure('envelope', 452, '4.2.2', '452 4.2.2 Mailbox full'), 'deferred'],
    ['421 shutdown', failure('protocol', 421, null, '421 Service not available'), 'deferred'],
    ['550 unknown user', failure('envelope', 550, '5.1.1', '550 5.1.1 User unknown'), 'failed'],
    ['554 policy', failure('data', 554, '5.7.1', '554 5.7.1 Rejected by policy'), 'failed'],
    ['550 with a transient enhanced status', failure('data', 550, '4.4.5', '550 4.4.5 try later'), 'deferred'],
    [
      'refused connection',
      failure('connect', null, null, 'connect ECONNREFUSED 127.0.0.1:1', 'ECONNREFUSED'),
      'deferred',
    ],
    ['timeout', failure('timeout', null, null, 'Timeout', 'ETIMEDOUT'), 'deferred'],
    ['reset', failure('connect', null, null, 'socket hang up', 'ECONNRESET'), 'deferred'],
    ['bad credentials', failure('auth', 535, '5.7.8', '535 5.7.8 Authentication failed'), 'account_problem'],
    [
      'auth required at MAIL',
      failure('envelope', 530, '5.7.0', '530 5.7.0 Authentication required'),
      'account_problem',
    ],
    ['STARTTLS missing', failure('tls', null, null, 'STARTTLS required but not offered'), 'account_problem'],
  ])('%s -> %s', (_name, reply, kind) => {
    expect(decideDelivery(reply).kind).toBe(kind);
  });

  it('keeps the relay text in the reason and reads its retry hint', () => {
    const decision = decideDelivery(
      failure('data', 450, '4.2.0', '450 4.2.0 Too many messages, try again in 90 seconds'),
    );
    expect(decision).toMatchObject({
      kind: 'deferred',
      retryAfterMs: 90_000,
      reason: '450 4.2.0 Too many messages, try again in 90 seconds',
    });
    expect(decideDelivery(failure('connect', null, null, '', 'ECONNREFUSED'))).toMatchObject({
      reason: 'connect: ECONNREFUSED',
    });
  });

  it('names the step that failed in the reason an account is paused for', () => {
    expect(decideDelivery(failure('tls', 500, '5.5.2', '500 5.5.2 Error: command not recognized'))).toMatchObject({
      reason: 'TLS: 500 5.5.2 Error: command not recognized',
    });
    expect(decideDelivery(failure('auth', 535, '5.7.8', '535 5.7.8 Authentication failed'))).toMatchObject({
      reason: 'AUTH: 535 5.7.8 Authentication failed',
    });
    expect(decideDelivery(failure('tls', null, null, '', 'ETLS'))).toMatchObject({ reason: 'tls: ETLS' });
    expect(decideDelivery(failure('envelope', 530, '5.7.0', '530 5.7.0 Authentication required'))).toMatchObject({
      reason: '530 5.7.0 Authentication required',
    });
  });
});

describe('parseRetryHint', () => {
  it.each([
    ['try again in 30 seconds', 30_000],
    ['Please retry in 5 minutes', 300_000],
    ['Retry-After: 120', 120_000],
    ['try again later', null],
    ['Greylisted, see http://x/1234', null],
  ])('%s', (text, expected) => expect(parseRetryHint(text)).toBe(expected));
});
