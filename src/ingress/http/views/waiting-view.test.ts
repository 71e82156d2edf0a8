import { describe, expect, it } from 'vitest';
import { whyWaiting, type WaitingInput } from '../../../core/message/waiting-reasons.js';
import type { WaitingSubject } from '../../../core/message/waiting-words.js';
import { viewWaiting } from './waiting-view.js';

const NOW = Date.UTC(2026, 10, 23, 10, 0, 30);
const nowSeconds = Math.floor(NOW / 1000);
const account = {
  pausedAt: null,
  pausedReason: null,
  limitPerMinute: null,
  limitPerHour: null,
  limitPerDay: null,
  maxConnections: 5,
};
type Message = WaitingInput['message'] & WaitingSubject;
const message = (extra: Partial<Message> = {}): Message => ({
  state: 'queued',
  attempts: 0,
  createdAt: (nowSeconds - 60) * 1000,
  nextAttemptAt: (nowSeconds - 1) * 1000,
  batchCode: 'spring',
  deferredReason: null,
  lastReplyCode: null,
  accountId: 'main',
  ...extra,
});
/** The reasons as GET /messages/{id} answers them. */
const why = (extra: Partial<WaitingInput> = {}, fields: Partial<Message> = {}) => {
  const m = message(fields);
  const input: WaitingInput = {
    message: m,
    tenantActive: true,
    suspensions: [],
    account,
    usage: { minute: 0, hour: 0, day: 0 },
    suppressed: [],
    maxAgeSeconds: 432_000,
    now: NOW,
    ...extra,
  };
  return viewWaiting(whyWaiting(input), m);
};

describe('why a message is still waiting, as the API words it', () => {
  it('a due message waits only for a connection; it expires max age after acceptance', () => {
    expect(why()).toEqual({
      waiting: true,
      reasons: [
        {
          code: 'due',
          message: 'due now: waiting for a free connection of account "main" (pool of 5)',
          until_ts: null,
        },
      ],
      expires_ts: nowSeconds - 60 + 432_000,
    });
  });

  it('names the batch, the account and why it was paused', () => {
    expect(why({ suspensions: ['spring'] }).reasons[0]?.message).toBe(
      'its batch "spring" is suspended (POST /commands/activate)',
    );
    expect(why({ account: null }).reasons[0]?.message).toBe('its account "main" does not exist any more');
    const paused = why({
      account: { ...account, pausedAt: NOW - 1000, pausedReason: '535 authentication failed' },
    }).reasons;
    expect(paused).toMatchObject([{ code: 'account_paused', until_ts: null }]);
    expect(paused[0]?.message).toContain('535 authentication failed');
  });

  it('an exhausted sending limit holds it until the latest full window ends', () => {
    const limited = why({
      account: { ...account, limitPerMinute: 10, limitPerHour: 100 },
      usage: { minute: 10, hour: 100, day: 100 },
    }).reasons;
    expect(limited).toMatchObject([{ code: 'rate_limited', until_ts: Date.UTC(2026, 10, 23, 11, 0, 0) / 1000 }]);
    expect(limited[0]?.message).toBe(
      'its account has used its sending limit for now; budget returns at 2026-11-23T11:00:00.000Z',
    );
  });

  it('tells a client schedule from a retry backoff', () => {
    const later = nowSeconds + 600;
    expect(why({}, { nextAttemptAt: later * 1000 }).reasons).toMatchObject([{ code: 'scheduled', until_ts: later }]);
    const backoff = why(
      {},
      { state: 'deferred', attempts: 2, nextAttemptAt: later * 1000, deferredReason: '451 4.7.1 greylisted' },
    ).reasons;
    expect(backoff).toMatchObject([{ code: 'retry_backoff', until_ts: later }]);
    expect(backoff[0]?.message).toContain('attempt 2 was refused for now (451 4.7.1 greylisted)');
    expect(
      why({}, { state: 'deferred', attempts: 1, nextAttemptAt: later * 1000, lastReplyCode: 421 }).reasons[0]?.message,
    ).toContain('(reply 421)');
  });

  it('names the suppressed recipients', () => {
    expect(why({ suppressed: ['ann@example.net'] }).reasons[0]?.message).toBe(
      "on the tenant's suppression list since it was accepted: ann@example.net",
    );
  });

  it('a sent or failed one waits for nothing', () => {
    expect(why({}, { state: 'sent' })).toEqual({ waiting: false, reasons: [], expires_ts: null });
  });
});
