import { describe, expect, it } from 'vitest';
import { whyWaiting, type WaitingInput } from './waiting-reasons.js';

const NOW = Date.UTC(2026, 10, 23, 10, 0, 30);
const nowSeconds = Math.floor(NOW / 1000);
const account = { pausedAt: null, pausedReason: null, limitPerMinute: null, limitPerHour: null, limitPerDay: null, maxConnections: 5 };
const input = (extra: Partial<WaitingInput> = {}, message: Partial<WaitingInput['message']> = {}): WaitingInput => ({
  message: {
    state: 'queued',
    attempts: 0,
    created_ts: nowSeconds - 60,
    next_attempt_ts: nowSeconds - 1,
    batch_code: 'spring',
    deferred_reason: null,
    last_reply_code: null,
    account_id: 'main',
    ...message,
  },
  tenantActive: true,
  suspensions: [],
  account,
  usage: { minute: 0, hour: 0, day: 0 },
  suppressed: [],
  maxAgeSeconds: 432_000,
  now: NOW,
  ...extra,
});
const codes = (extra: Partial<WaitingInput> = {}, message: Partial<WaitingInput['message']> = {}) =>
  whyWaiting(input(extra, message)).reasons.map((reason) => reason.code);

describe('why a message is still waiting', () => {
  it('a due message waits only for a connection; it expires max age after acceptance', () => {
    expect(whyWaiting(input())).toEqual({
      waiting: true,
      reasons: [{ code: 'due', message: 'due now: waiting for a free connection of account "main" (pool of 5)', until_ts: null }],
      expires_ts: nowSeconds - 60 + 432_000,
    });
  });

  it('names the tenant, its suspension, the batch suspension and the account, each with how it ends', () => {
    expect(codes({ tenantActive: false })).toEqual(['tenant_inactive']);
    expect(codes({ suspensions: ['*'] })).toEqual(['tenant_suspended']);
    expect(codes({ suspensions: ['spring'] })).toEqual(['batch_suspended']);
    expect(codes({ suspensions: ['autumn'] })).toEqual(['due']);
    expect(codes({ account: null })).toEqual(['account_missing']);
    const paused = whyWaiting(input({ account: { ...account, pausedAt: NOW - 1000, pausedReason: '535 authentication failed' } })).reasons;
    expect(paused).toMatchObject([{ code: 'account_paused', until_ts: null }]);
    expect(paused[0]?.message).toContain('535 authentication failed');
  });

  it('an exhausted sending limit holds it until the latest full window ends', () => {
    const limited = whyWaiting(input({ account: { ...account, limitPerMinute: 10, limitPerHour: 100 }, usage: { minute: 10, hour: 100, day: 100 } })).reasons;
    expect(limited).toMatchObject([{ code: 'rate_limited', until_ts: Date.UTC(2026, 10, 23, 11, 0, 0) / 1000 }]);
    expect(codes({ account: { ...account, limitPerMinute: 10 }, usage: { minute: 9, hour: 9, day: 9 } })).toEqual(['due']);
  });

  it('tells a client schedule from a retry backoff', () => {
    const later = nowSeconds + 600;
    expect(whyWaiting(input({}, { next_attempt_ts: later })).reasons).toMatchObject([{ code: 'scheduled', until_ts: later }]);
    const backoff = whyWaiting(input({}, { state: 'deferred', attempts: 2, next_attempt_ts: later, deferred_reason: '451 4.7.1 greylisted' })).reasons;
    expect(backoff).toMatchObject([{ code: 'retry_backoff', until_ts: later }]);
    expect(backoff[0]?.message).toContain('attempt 2 was refused for now (451 4.7.1 greylisted)');
  });

  it('lists every blocker at once, and suppressed recipients', () => {
    expect(codes({ suspensions: ['*', 'spring'], suppressed: ['ann@example.net'] }, { next_attempt_ts: nowSeconds + 60 })).toEqual([
      'tenant_suspended',
      'batch_suspended',
      'scheduled',
      'suppressed',
    ]);
  });

  it('a message on the wire is sending; a sent or failed one waits for nothing', () => {
    expect(codes({}, { state: 'sending' })).toEqual(['sending']);
    expect(whyWaiting(input({}, { state: 'sent' }))).toEqual({ waiting: false, reasons: [], expires_ts: null });
    expect(whyWaiting(input({}, { state: 'error' })).waiting).toBe(false);
  });
});
