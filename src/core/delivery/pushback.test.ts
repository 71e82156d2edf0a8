import { describe, expect, it } from 'vitest';
import { decideDelivery } from './delivery-outcome.js';
import { isPushback, pushbackOf } from './pushback.js';

/** A relay's refusal after DATA, as the transport reports it. */
const refusal = (line: string) => {
  const match = /^(\d{3})(?: ([245]\.\d+\.\d+))?/.exec(line);
  return decideDelivery({
    ok: false,
    stage: 'data',
    replyCode: match ? Number(match[1]) : null,
    enhancedStatus: match?.[2] ?? null,
    text: line,
    errorCode: null,
    refused: [],
  });
};

describe('pushback', () => {
  it.each([
    ['421 4.7.0 Try again later, closing connection', 'policy_status'],
    ['451 4.7.1 rate limited', 'rate_words'],
    ['421 4.7.28 Our system has detected an unusual rate of unsolicited mail', 'policy_status'],
    ['451 4.7.500 Server busy. Please try again later from [192.0.2.1]', 'rate_words'],
    ['454 Throttling failure: Maximum sending rate exceeded.', 'rate_words'],
    [
      '421 4.7.0 [TSS04] Messages from 192.0.2.1 temporarily deferred due to unexpected volume or user complaints',
      'rate_words',
    ],
    ['452 4.5.3 Too many recipients', 'rate_words'],
    ['421 Too many concurrent SMTP connections from this IP address; please try again later', 'rate_words'],
    ['450 4.7.1 Sending quota exceeded, try again in 60 seconds', 'rate_words'],
  ])('reads %s as pushback (%s)', (line, why) => {
    const decision = refusal(line);
    expect(decision.kind).toBe('deferred');
    expect(isPushback(decision)).toBe(true);
    if (decision.kind === 'deferred') expect(pushbackOf(decision)).toBe(why);
  });

  it.each([
    '451 4.7.1 Greylisted, please try again in 300 seconds',
    '450 4.2.1 Mailbox temporarily unavailable',
    '452 4.2.2 Mailbox full',
    '451 4.3.0 Local error in processing',
    '421 4.4.2 Connection timed out',
    '550 5.7.1 Rate limit exceeded permanently for this sender',
  ])('does not read %s as pushback', (line) => {
    expect(isPushback(refusal(line))).toBe(false);
  });

  it('is never a sent message, nor a broken connection', () => {
    expect(
      isPushback(
        decideDelivery({ ok: true, replyCode: 250, enhancedStatus: '2.0.0', text: '250 ok', refused: [] } as never),
      ),
    ).toBe(false);
    expect(
      isPushback(
        decideDelivery({
          ok: false,
          stage: 'connect',
          replyCode: null,
          enhancedStatus: null,
          text: 'connect ECONNREFUSED 127.0.0.1:25',
          errorCode: 'ECONNREFUSED',
          refused: [],
        }),
      ),
    ).toBe(false);
  });
});
